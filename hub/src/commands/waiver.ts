import { parseExpiry, type Waiver, WaiverCreateSchema } from '@driftline/protocol';
import type { Command } from 'commander';
import { openDriftStore, openHubStore } from '../adapters/openStores.js';
import type { HubConfig } from '../config.js';
import { Drift } from '../core/drift/Drift.js';
import { systemClock } from '../ports/Clock.js';
import { ulidGen } from '../ports/IdGen.js';

const list = (v: string | undefined) =>
  v === undefined
    ? undefined
    : v
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== '');

function line(w: Waiver): string {
  const scope = [
    w.sites.length ? `sites ${w.sites.join(',')}` : '',
    w.environments.length ? `environments ${w.environments.join(',')}` : '',
    w.components.length ? `components ${w.components.join(',')}` : '',
    w.attributes ? `attributes ${w.attributes.join(',')}` : '',
  ]
    .filter((s) => s !== '')
    .join('; ');
  const state = w.removedAt ? `removed by ${w.removedBy}` : w.active ? `covers ${w.covers}` : 'expired';
  return `${w.id}  ${w.pattern}${scope ? ` (${scope})` : ''}  until ${w.expiresAt}  by ${w.author}  ${state}  — ${w.reason}`;
}

/**
 * `hub waiver add|list|remove` (decision 421): expiring, audited rules that mark matching drift
 * `waived`. They write the hub's drift store (`drift.db`, or the PostgreSQL store's database: decision
 * 470) and its audit log, as the API does; a running hub sees the change at its next read (the store's stamp).
 */
export function addWaiverVerbs(program: Command, config: (o: { config?: string }) => HubConfig): void {
  const waiver = program
    .command('waiver')
    .description('waive known drift until a time: counted apart, never in attention, back at expiry')
    .addHelpText(
      'after',
      '\nExample:\n  hub waiver add --pattern "aws_security_group.*" --attributes ingress --expires 7d --reason "provider upgrade"',
    );
  const withDrift = async <T>(o: { config?: string }, fn: (d: Drift) => Promise<T>): Promise<T> => {
    const c = config(o);
    const store = await openHubStore(c);
    const driftStore = openDriftStore(c);
    try {
      const drift = new Drift({
        drift: driftStore,
        commit: (w) => store.commit(w),
        clock: systemClock,
        ids: ulidGen(systemClock),
        webhookUrls: [],
      });
      return await fn(drift);
    } finally {
      await driftStore.close();
      await store.close();
    }
  };
  const verb = (name: string, description: string, example: string) =>
    waiver
      .command(name)
      .description(description)
      .option('-c, --config <file>', 'hub.yaml')
      .option('--json', 'machine-readable output')
      .addHelpText('after', `\nExample:\n  ${example}`)
      .exitOverride();

  verb(
    'add',
    'waive drift whose address or signature matches --pattern (* for any text) until --expires',
    'hub waiver add --pattern "module.site[*].aws_security_group.web[*]" --expires 2026-12-31T00:00:00Z --reason "ticket OPS-12"',
  )
    .requiredOption('--pattern <pattern>', 'an address or signature, * for any text')
    .requiredOption(
      '--expires <when>',
      'an ISO 8601 time or a duration from now (30m, 12h, 7d), within a year',
    )
    .requiredOption('--reason <text>', 'why the drift is known and accepted')
    .option('--attributes <names>', 'only drift in these attributes (comma-separated)')
    .option('--sites <patterns>', 'only at these sites (comma-separated, * for any text)')
    .option('--environments <patterns>', 'only in these environments')
    .option('--components <patterns>', 'only of these components')
    .option('--author <name>', 'who answers for it (default: $USER)')
    .action(
      async (o: {
        pattern: string;
        expires: string;
        reason: string;
        attributes?: string;
        sites?: string;
        environments?: string;
        components?: string;
        author?: string;
        config?: string;
        json?: boolean;
      }) => {
        // the API's own schema, so the CLI refuses what the API would, naming the option
        const parsed = WaiverCreateSchema.safeParse({
          pattern: o.pattern,
          reason: o.reason,
          expires: o.expires,
          attributes: list(o.attributes),
          sites: list(o.sites),
          environments: list(o.environments),
          components: list(o.components),
        });
        if (!parsed.success) {
          for (const i of parsed.error.issues)
            console.error(`hub waiver add: --${String(i.path[0] ?? 'pattern')}: ${i.message}`);
          process.exit(2);
        }
        const { expires, ...rest } = parsed.data;
        const expiresAt = parseExpiry(expires, Date.now());
        if (expiresAt === null) {
          console.error(
            `hub waiver add: --expires ${JSON.stringify(expires.slice(0, 40))}: give a future time within a year, as ISO 8601 or a duration (30m, 12h, 7d)`,
          );
          process.exit(2);
        }
        const author = (o.author ?? process.env.USER ?? 'cli').slice(0, 100);
        const w = await withDrift(o, (d) =>
          d.addWaiver({ ...rest, expiresAt }, { actor: author, via: 'cli', address: '' }),
        );
        console.log(o.json ? JSON.stringify(w) : line(w));
      },
    );

  verb('list', 'every waiver: active ones with how many open episodes each covers', 'hub waiver list').action(
    async (o: { config?: string; json?: boolean }) => {
      const ws = await withDrift(o, (d) => d.waivers());
      if (o.json) console.log(JSON.stringify({ waivers: ws }));
      else console.log(ws.length ? ws.map(line).join('\n') : 'no waivers');
    },
  );

  verb('remove', 'remove a waiver: the drift it covered returns', 'hub waiver remove w-01hx…')
    .argument('<id>', 'the waiver id (hub waiver list)')
    .option('--author <name>', 'who removes it (default: $USER)')
    .action(async (id: string, o: { config?: string; json?: boolean; author?: string }) => {
      const author = (o.author ?? process.env.USER ?? 'cli').slice(0, 100);
      const w = await withDrift(o, (d) => d.removeWaiver(id, { actor: author, via: 'cli', address: '' }));
      if (!w) {
        console.error(`hub waiver remove: no waiver '${id.slice(0, 100)}' (hub waiver list names them)`);
        process.exit(1);
      }
      console.log(o.json ? JSON.stringify(w) : line(w));
    });
}
