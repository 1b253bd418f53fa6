import { existsSync, statSync } from 'node:fs';
import type { Command } from 'commander';
import { z } from 'zod';
import { configWarnings, loadConfigFile, RelayConfigSchema, resolveUpstreams } from '../config.js';

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
    .option('--json', 'print { ok, name, listen, dataDir, sites, upstreams, problems, warnings }')
    .addHelpText(
      'after',
      '\nExit codes: 0 usable (warnings are printed, not counted), 2 a problem.\n\nExample:\n  relay config check --config relay.yaml',
    )
    .action((o: { config: string; json?: boolean }) => {
      const r = checkRelayConfig(o.config, process.env);
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
      }
      if (!r.ok) process.exitCode = 2;
    });
  config
    .command('schema')
    .description('print the JSON Schema of relay.yaml (for editors: # yaml-language-server: $schema=<file>)')
    .addHelpText('after', '\nExample:\n  relay config schema > relay.schema.json')
    .action(() => {
      console.log(JSON.stringify(relayConfigJsonSchema(), null, 2));
    });
}
