import { createReadStream, statSync } from 'node:fs';
import { join } from 'node:path';
import { asLegacyBundle, FILE_KINDS, FileKindSchema } from '@driftline/protocol';
import { Command } from 'commander';
import { FileBlobs } from '../adapters/fs/FileBlobs.js';
import { loadOrCreateHubKey } from '../adapters/fs/hubKey.js';
import { openStores } from '../adapters/openStores.js';
import { Publisher } from '../adapters/publish/Publisher.js';
import { publicationDetail, publicationDetails } from '../adapters/publish/publicationViews.js';
import { keyPath } from '../app.js';
import type { HubConfig } from '../config.js';
import { cliAudit } from '../core/users.js';
import { systemClock } from '../ports/Clock.js';
import { ulidGen } from '../ports/IdGen.js';

/** Bytes as people read them: `12.3 KiB`, `1.5 MiB`. */
export const fmtBytes = (n: number) =>
  n >= 1 << 20 ? `${(n / (1 << 20)).toFixed(1)} MiB` : n >= 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${n} B`;

type LoadConfig = (o: { config?: string }) => HubConfig;

/**
 * `hub publication publish|list`: files to outposts (docs/architecture.md#bundles-to-outposts). `hub bundle …`, the
 * name before decision 170, stays for one version as a hidden alias: the same verbs, the same stdout
 * (its `--json` keeps the old field names `bundleId` and `bundles`), a deprecation note on stderr.
 */
export function addPublicationVerbs(program: Command, config: LoadConfig): void {
  program.addCommand(publicationCommand(program, 'publication', config));
  program.addCommand(publicationCommand(program, 'bundle', config), { hidden: true });
}

function publicationCommand(program: Command, name: 'publication' | 'bundle', config: LoadConfig): Command {
  const legacy = name === 'bundle';
  const me = `hub ${name} publish`;
  const cmd = new Command(name)
    .copyInheritedSettings(program)
    .description(
      'publish files (provider mirrors, modules, images, configs) to sites and follow their delivery',
    )
    .addHelpText(
      'after',
      `\nExample:\n  hub ${name} publish --site ship-7 --name aws-5.80 --kind provider-mirror ./mirror.tar`,
    );
  if (legacy)
    cmd.hook('preAction', () => {
      console.error('hub bundle: deprecated, use `hub publication` (same verbs and options)');
    });
  const open = async (c: HubConfig) => {
    const { store, publications } = await openStores(c);
    return {
      store,
      publications,
      close: async () => {
        await publications.close();
        await store.close();
      },
    };
  };
  cmd
    .command('publish')
    .description(
      "store <file> content-addressed, sign a manifest and queue it on each target site's downlink (bulk)",
    )
    .argument('<file>', 'the file to ship; it is never unpacked or executed at the site')
    .requiredOption('--site <sites>', "target site id(s), comma-separated, or 'all'")
    .requiredOption('--name <name>', 'name shown on the dashboard and used for the placed file')
    .option('--kind <kind>', `one of ${FILE_KINDS.join(', ')}`, 'file')
    .option('--ttl <seconds>', 'expire at relays and sites after this long (default 30 days)')
    .option('-c, --config <file>', 'hub.yaml')
    .option('--json', 'machine-readable output')
    .addHelpText(
      'after',
      `\nExample:\n  hub ${name} publish --site all --name modules-2025-06 --kind module ./modules.tar.gz`,
    )
    .exitOverride()
    .action(async (file: string, o) => {
      const kind = FileKindSchema.safeParse(o.kind);
      if (!kind.success) {
        console.error(`${me}: --kind must be one of ${FILE_KINDS.join(', ')}`);
        process.exit(2);
      }
      try {
        if (!statSync(file).isFile()) throw new Error('not a regular file');
      } catch (e) {
        console.error(`${me}: cannot read ${file}: ${(e as Error).message}`);
        process.exit(2);
      }
      const c = config(o);
      const key = await loadOrCreateHubKey(keyPath(c.dataDir));
      const s = await open(c);
      try {
        const publisher = new Publisher({
          store: s.store,
          publications: s.publications,
          blobs: new FileBlobs(join(c.dataDir, 'blobs')),
          tmpDir: join(c.dataDir, 'publish-tmp'),
          hubPrivateKey: key.privateKey,
          clock: systemClock,
          ids: ulidGen(systemClock),
        });
        const r = await publisher.publish(createReadStream(file), {
          sites: String(o.site)
            .split(',')
            .map((x) => x.trim())
            .filter(Boolean),
          name: o.name,
          fileKind: kind.data,
          ttlS: o.ttl ? Number(o.ttl) : undefined,
        });
        if (!r.ok) {
          console.error(`${me}: ${r.message}`);
          process.exit(2);
        }
        const p = r.publication;
        await s.store.commit({
          audit: [
            cliAudit(
              'publication.publish',
              `${p.publicationId} ${p.name} → ${p.sites.join(',')}`,
              Date.now(),
            ),
          ],
        });
        if (o.json) {
          const detail = await publicationDetail(s.publications, p);
          console.log(JSON.stringify(legacy ? asLegacyBundle(detail) : detail));
        } else
          console.log(
            `published ${p.publicationId} ${p.name} (${p.fileKind}, ${fmtBytes(p.size)}, sha256 ${p.sha256}) to ${p.sites.join(', ')}`,
          );
      } finally {
        await s.close();
      }
    });
  cmd
    .command('list')
    .description('list publications with their delivery counts')
    .option('-c, --config <file>', 'hub.yaml')
    .option('--json', 'machine-readable output')
    .addHelpText('after', `\nExample:\n  hub ${name} list --json`)
    .exitOverride()
    .action(async (o) => {
      const s = await open(config(o));
      try {
        const out = await publicationDetails(s.publications);
        if (o.json)
          console.log(JSON.stringify(legacy ? { bundles: out.map(asLegacyBundle) } : { publications: out }));
        else
          for (const p of out) {
            const who = (d: { site: string; agent: string | null }) =>
              `${d.site}${d.agent ? `/${d.agent}` : ''}`;
            console.log(
              `${p.publicationId}\t${p.name}\t${p.fileKind}\t${fmtBytes(p.size)}\t${p.deliveries.map((d) => `${who(d)}:${d.state}`).join(' ')}`,
            );
            // Why a site refused (or no longer takes) it: what the operator acts on, under its line.
            for (const d of p.deliveries) if (d.reason) console.log(`  ${who(d)} ${d.state}: ${d.reason}`);
          }
      } finally {
        await s.close();
      }
    });
  return cmd;
}
