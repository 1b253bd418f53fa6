import { existsSync, statSync } from 'node:fs';
import type { Command } from 'commander';
import { z } from 'zod';
import { configWarnings, loadConfigFile, RelayConfigSchema, resolveUpstreams } from '../config.js';
import { checkUpstreams, type OnlineResult } from './onlineCheck.js';

/** The JSON Schema of `relay.yaml` (what the file may hold, before defaults), from the zod schema. */
export function relayConfigJsonSchema(): object {
  return z.toJSONSchema(RelayConfigSchema, { io: 'input', target: 'draft-7' });
}

interface CheckReport {
  ok: boolean;
  name?: string;
  listen?: string;
  dataDir?: string;
  sites?: string[];
  upstreams?: { name: string; url: string }[];
  problems: string[];
  warnings: string[];
  /** With `--online`: what each upstream said. */
  online?: OnlineResult[];
}

function loadConfigOrThrow(path: string) {
  const r = loadConfigFile(path);
  if (!r.ok) throw new Error(r.errors.join('; '));
  return r.value;
}

/** Parses the file, resolves its paths and reads its token files; every problem with its key path. */
export function checkRelayConfig(path: string, env: NodeJS.ProcessEnv): CheckReport {
  const r = loadConfigFile(path);
  if (!r.ok) return { ok: false, problems: r.errors, warnings: [] };
  const c = r.value;
  const problems: string[] = [];
  if (existsSync(c.dataDir) && !statSync(c.dataDir).isDirectory())
    problems.push(`dataDir: ${c.dataDir} exists and is not a directory`);
  const ups = resolveUpstreams(c, env);
  if (!ups.ok) problems.push(...ups.errors);
  return {
    ok: problems.length === 0,
    name: c.name,
    listen: `${c.listen.host}:${c.listen.port}`,
    dataDir: c.dataDir,
    sites: c.sites,
    upstreams: c.upstreams.map((u) => ({ name: u.name ?? new URL(u.url).host, url: u.url })),
    problems,
    warnings: configWarnings(c),
  };
}

/** `relay config check|schema`. */
export function addConfigVerbs(program: Command): void {
  const config = program
    .command('config')
    .description('check a relay configuration file, or print its JSON Schema');
  config
    .command('check')
    .description(
      'parse relay.yaml, resolve its paths, read its token files; list every problem with its key path',
    )
    .requiredOption('-c, --config <file>', 'relay config file (YAML)')
    .option('--json', 'print { ok, name, listen, dataDir, sites, upstreams, problems, warnings, online }')
    .option('--online', 'also ask each upstream whether it answers and takes the token (GET /v1/peer)')
    .option('--timeout <seconds>', 'with --online: how long to wait for each upstream', '30')
    .addHelpText(
      'after',
      '\nExit codes: 0 usable (warnings are printed, not counted), 1 an upstream does not answer --online, 2 a problem\n(an upstream refusing the token included).\n\nExample:\n  relay config check --config relay.yaml --online',
    )
    .action(async (o: { config: string; json?: boolean; online?: boolean; timeout: string }) => {
      const r: CheckReport = checkRelayConfig(o.config, process.env);
      const timeoutMs = Number(o.timeout) * 1000;
      if (o.online && r.ok) {
        if (!(timeoutMs > 0)) {
          console.error(`relay config check: --timeout: '${o.timeout}' is not a number of seconds above 0`);
          process.exitCode = 2;
          return;
        }
        const ups = resolveUpstreams(loadConfigOrThrow(o.config), process.env);
        if (ups.ok) r.online = await checkUpstreams(r.name ?? '', r.sites ?? [], ups.value, timeoutMs);
        // a refused token is a problem of the file (its tokenFile), judged before the verdict is printed
        for (const [i, u] of (r.online ?? []).entries())
          if (u.refused) r.problems.push(`upstreams[${i}].tokenFile: ${u.name} (${u.url}) refuses the token`);
        r.ok = r.problems.length === 0;
      }
      if (o.json) console.log(JSON.stringify(r, null, 2));
      else {
        if (r.name)
          console.log(
            `${o.config}: ${r.ok ? 'OK' : 'not usable'} — relay ${r.name} on ${r.listen}, data in ${r.dataDir}; ` +
              `sites: ${r.sites?.join(', ') || '(none)'}; upstreams: ${r.upstreams?.map((u) => u.url).join(', ') || '(none)'}`,
          );
        for (const w of r.warnings) console.log(`warning: ${w}`);
        if (!r.ok)
          console.error(
            `${o.config}: ${r.problems.length} problem(s):\n${r.problems.map((p) => `  - ${p}`).join('\n')}`,
          );
        for (const u of r.online ?? []) {
          if (u.ok) console.log(u.line);
          else console.error(u.line);
          if (u.warning) console.log(`warning: ${u.warning}`);
        }
      }
      // A refused token is a credential problem (2, as in the file); an upstream that does not answer, 1.
      if (!r.ok) process.exitCode = 2;
      else if (r.online?.some((u) => !u.ok)) process.exitCode = 1;
    });
  config
    .command('schema')
    .description('print the JSON Schema of relay.yaml (for editors: # yaml-language-server: $schema=<file>)')
    .addHelpText('after', '\nExample:\n  relay config schema > relay.schema.json')
    .action(() => {
      console.log(JSON.stringify(relayConfigJsonSchema(), null, 2));
    });
}
