/** A terraform command line, as far as the fake understands it. */
export type TfCommand =
  | {
      verb: 'plan';
      out: string | null;
      detailedExitcode: boolean;
      lockTimeout: string | null;
      /** `-json`: the UI as JSON lines on stdout, diagnostics included (Terraform 0.15.3+). */
      json: boolean;
      /** Every `-var-file=<path>`, in order. */
      varFiles: string[];
      chdir: string | null;
    }
  | { verb: 'show'; json: boolean; file: string | null; chdir: string | null }
  /** `apply <planfile>`: only a saved plan (the agent never applies anything else). */
  | { verb: 'apply'; file: string | null; lockTimeout: string | null; chdir: string | null }
  | { verb: 'version'; json: boolean; chdir: string | null }
  | {
      verb: 'init';
      /** Every `-plugin-dir=<dir>`: when given, the only places providers are installed from. */
      pluginDirs: string[];
      chdir: string | null;
    }
  | { verb: 'validate'; chdir: string | null }
  | {
      verb: 'providers mirror';
      /** Every `-platform=<os_arch>`; empty means this machine's. */
      platforms: string[];
      /** `-lock-file=false` ignores the lock file's selections. */
      lockFile: boolean;
      dir: string | null;
      chdir: string | null;
    }
  | { verb: 'unknown'; name: string; chdir: string | null };

/** Terraform's flags: one dash, `-name=value` (the Go flag package also takes `-name value` and two dashes). */
export function parseArgs(argv: string[]): TfCommand {
  const args = [...argv];
  let chdir: string | null = null;
  while (args[0]?.startsWith('-')) {
    const a = args.shift()!;
    const m = /^--?chdir(?:=(.*))?$/.exec(a);
    if (m) chdir = m[1] ?? args.shift() ?? null;
  }
  const verb = args.shift() ?? 'help';
  const flag = (name: string): string | true | null => {
    for (let i = 0; i < args.length; i++) {
      const m = new RegExp(`^--?${name}(?:=(.*))?$`).exec(args[i]!);
      if (!m) continue;
      if (m[1] !== undefined) return m[1];
      const next = args[i + 1];
      return next !== undefined && !next.startsWith('-') && name === 'out' ? next : true;
    }
    return null;
  };
  const str = (v: string | true | null) => (typeof v === 'string' ? v : null);
  const bool = (v: string | true | null) => v === true || v === 'true';
  switch (verb) {
    case 'plan':
      return {
        verb,
        out: str(flag('out')),
        detailedExitcode: bool(flag('detailed-exitcode')),
        lockTimeout: str(flag('lock-timeout')),
        json: bool(flag('json')),
        varFiles: args.flatMap((a) => {
          const m = /^--?var-file=(.+)$/.exec(a);
          return m ? [m[1] as string] : [];
        }),
        chdir,
      };
    case 'show': {
      const file = args.filter((a) => !a.startsWith('-')).pop() ?? null;
      return { verb, json: bool(flag('json')), file, chdir };
    }
    case 'apply': {
      const file = args.filter((a) => !a.startsWith('-')).pop() ?? null;
      return { verb, file, lockTimeout: str(flag('lock-timeout')), chdir };
    }
    case 'version':
      return { verb, json: bool(flag('json')), chdir };
    case 'init':
      return {
        verb,
        pluginDirs: args.flatMap((a) => {
          const m = /^--?plugin-dir=(.+)$/.exec(a);
          return m ? [m[1] as string] : [];
        }),
        chdir,
      };
    case 'validate':
      return { verb, chdir };
    case 'providers':
      if (args[0] === 'mirror') {
        const rest = args.slice(1);
        return {
          verb: 'providers mirror',
          platforms: rest.flatMap((a) => {
            const m = /^--?platform=(.+)$/.exec(a);
            return m ? [m[1] as string] : [];
          }),
          lockFile: !rest.some((a) => /^--?lock-file=false$/.test(a)),
          dir: rest.filter((a) => !a.startsWith('-')).pop() ?? null,
          chdir,
        };
      }
      return { verb: 'unknown', name: `providers ${args[0] ?? ''}`.trim(), chdir };
    default:
      return { verb: 'unknown', name: verb, chdir };
  }
}
