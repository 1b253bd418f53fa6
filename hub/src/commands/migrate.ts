import type { Command } from 'commander';
import { migrateStore } from '../adapters/openStores.js';
import { StoreRefusedError } from '../adapters/postgres/errors.js';
import type { HubConfig } from '../config.js';

/**
 * `hub migrate`: brings the store's schema up to date and stops, printing what it applied. `hub run`
 * does the same at start; running it alone lets an operator migrate before starting several hubs.
 */
export function addMigrateVerb(program: Command, config: (o: { config?: string }) => HubConfig): void {
  program
    .command('migrate')
    .description(
      "apply the store's missing schema migrations and print them (hub run also does this at start)",
    )
    .option('-c, --config <file>', 'hub.yaml (default: built-in defaults, data in ./hub-data)')
    .option('--json', 'print { kind, where, applied: [{ version, name }], version }')
    .addHelpText(
      'after',
      [
        '',
        'PostgreSQL (store.kind: postgres): every missing migration is applied in one transaction, under',
        'an advisory lock, so hubs starting at the same time never apply one twice. SQLite migrates',
        'itself whenever the store is opened; this prints the version it is at.',
        '',
        'Exit codes: 0 up to date, 1 the database could not be reached, 2 a bad configuration or a database',
        'that refuses this hub (a wrong password, no such database).',
        '',
        'Example:',
        '  hub migrate --config hub.yaml',
      ].join('\n'),
    )
    .exitOverride()
    .action(async (o: { config?: string; json?: boolean }) => {
      const c = config(o);
      let r: Awaited<ReturnType<typeof migrateStore>>;
      try {
        r = await migrateStore(c);
      } catch (e) {
        console.error(`hub migrate: ${(e as Error).message}`);
        process.exitCode = e instanceof StoreRefusedError ? 2 : 1;
        return;
      }
      if (o.json) console.log(JSON.stringify(r));
      else if (r.applied.length === 0) console.log(`${r.where}: up to date (schema version ${r.version})`);
      else {
        for (const m of r.applied) console.log(`applied ${m.version}: ${m.name}`);
        console.log(`${r.where}: schema version ${r.version}`);
      }
    });
}
