/**
 * `@driftline/hop/cli`: what the agent's, the relay's and the hub's command lines share. No dependency:
 * the command is described by the few members of commander's `Command` this reads.
 */

interface CliOption {
  mandatory: boolean;
  readonly flags: string;
  attributeName(): string;
}

interface CliCommand {
  readonly commands: readonly CliCommand[];
  readonly options: readonly CliOption[];
  readonly parent: CliCommand | null;
  getOptionValue(key: string): unknown;
  error(message: string, o: { code: string }): never;
  hook(event: 'preAction', fn: (self: CliCommand, action: CliCommand) => void): unknown;
}

/**
 * A mistyped option is named before a required one is missed: commander checks required options first, so
 * `status --confg x` said "required option '--config <file>' not specified" and never named `--confg`
 * (issue 58). Every required option of `program` and its verbs is checked once commander has refused
 * unknown options (a `preAction` hook), in commander's own words and with its code. Call it after every
 * verb is registered, before `parse`.
 */
export function unknownOptionsFirst(program: CliCommand): void {
  const required = new Map<CliCommand, CliOption[]>();
  const stack = [program];
  for (let c = stack.pop(); c; c = stack.pop()) {
    stack.push(...c.commands);
    const mine = c.options.filter((o) => o.mandatory);
    for (const o of mine) o.mandatory = false;
    if (mine.length > 0) required.set(c, mine);
  }
  program.hook('preAction', (_self, action) => {
    for (let c: CliCommand | null = action; c; c = c.parent)
      for (const o of required.get(c) ?? [])
        if (c.getOptionValue(o.attributeName()) === undefined)
          c.error(`error: required option '${o.flags}' not specified`, {
            code: 'commander.missingMandatoryOptionValue',
          });
  });
}
