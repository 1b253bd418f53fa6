import { existsSync, statSync } from 'node:fs';
import type { Command } from 'commander';
import { z } from 'zod';
import { checkStore } from '../adapters/openStores.js';
import { configWarnings, HubConfigSchema, listenersOf, loadConfig } from '../config.js';

/** The JSON Schema of `hub.yaml` (what the file may hold, before defaults), from the zod schema. */
export function hubConfigJsonSchema(): object {
  return z.toJSONSchema(HubConfigSchema, { io: 'input', target: 'draft-7' });
}

interface CheckReport {
  ok: boolean;
  listen?: { hop: string; api: string };
  dataDir?: string;
  uiDir?: string;
  /** Users who may sign in, when the store exists. */
  users?: number;
  problems: string[];
  warnings: string[];
}

const addr = (a: { host: string; port: number }) => `${a.host}:${a.port}`;

/** Parses the file and resolves its paths; looks at the data dir and the store without creating them. */
export async function checkHubConfig(path: string, env: NodeJS.ProcessEnv): Promise<CheckReport> {
  const r = loadConfig(path, env);
  if (!r.ok) return { ok: false, problems: r.errors, warnings: [] };
  const c = r.config;
  const problems: string[] = [];
  const warnings = configWarnings(c);
  const l = listenersOf(c);
  let users: number | undefined;
  if (existsSync(c.dataDir) && !statSync(c.dataDir).isDirectory())
    problems.push(`dataDir: ${c.dataDir} exists and is not a directory`);
  else {
    const s = await checkStore(c, env);
    problems.push(...s.problems);
    warnings.push(...s.warnings);
    users = s.users;
    if (users === 0 && !c.api.sso.defaultRole)
      warnings.push('no users: nobody can sign in; add one with `hub user add NAME --role admin`');
  }
  return {
    ok: problems.length === 0,
    listen:
      'shared' in l ? { hop: addr(l.shared), api: addr(l.shared) } : { hop: addr(l.hop), api: addr(l.api) },
    dataDir: c.dataDir,
    uiDir: c.uiDir,
    ...(users === undefined ? {} : { users }),
    problems,
    warnings,
  };
}

/** `hub config check|schema`. */
export function addConfigVerbs(program: Command): void {
  const config = program
    .command('config')
    .description('check a hub configuration file, or print its JSON Schema');
  config
    .command('check')
    .description('parse hub.yaml and resolve its paths; list every problem with its key path')
    .requiredOption('-c, --config <file>', 'hub.yaml')
    .option('--json', 'print { ok, listen, dataDir, uiDir, users, problems, warnings }')
    .addHelpText(
      'after',
      '\nExit codes: 0 usable (warnings are printed, not counted), 2 a problem.\n\nExample:\n  hub config check --config hub.yaml',
    )
    .exitOverride()
    .action(async (o: { config: string; json?: boolean }) => {
      const r = await checkHubConfig(o.config, process.env);
      if (o.json) console.log(JSON.stringify(r, null, 2));
      else {
        if (r.listen)
          console.log(
            `${o.config}: ${r.ok ? 'OK' : 'not usable'} — hop API on ${r.listen.hop}, dashboard and /api on ${r.listen.api}; ` +
              `data in ${r.dataDir}; dashboard from ${r.uiDir}${r.users === undefined ? '' : `; ${r.users} user(s)`}`,
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
    .description('print the JSON Schema of hub.yaml (for editors: # yaml-language-server: $schema=<file>)')
    .addHelpText('after', '\nExample:\n  hub config schema > hub.schema.json')
    .exitOverride()
    .action(() => {
      console.log(JSON.stringify(hubConfigJsonSchema(), null, 2));
    });
}
