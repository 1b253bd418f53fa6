import { createReadStream, statSync } from 'node:fs';
import { join } from 'node:path';
import { FILE_KINDS, FileKindSchema } from '@driftline/protocol';
import type { Command } from 'commander';
import { FileBlobs } from '../adapters/fs/FileBlobs.js';
import { loadOrCreateHubKey } from '../adapters/fs/hubKey.js';
import { openStores } from '../adapters/openStores.js';
import { BundlePublisher } from '../adapters/publish/BundlePublisher.js';
import { bundleDetail } from '../adapters/publish/bundleApi.js';
import { keyPath } from '../app.js';
import type { HubConfig } from '../config.js';
import { cliAudit } from '../core/users.js';
import { systemClock } from '../ports/Clock.js';
import { ulidGen } from '../ports/IdGen.js';

/** Bytes as people read them: `12.3 KiB`, `1.5 MiB`. */
export const fmtBytes = (n: number) =>
  n >= 1 << 20 ? `${(n / (1 << 20)).toFixed(1)} MiB` : n >= 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${n} B`;

/** `hub bundle publish|list|show`: files to outposts (DESIGN, "Bundles to outposts"). */
export function addBundleVerbs(program: Command, config: (o: { config?: string }) => HubConfig): void {
  const bundle = program
    .command('bundle')
    .description(
      'publish files (provider mirrors, modules, images, configs) to sites and follow their delivery',
    )
    .addHelpText(
      'after',
      '\nExample:\n  hub bundle publish --site ship-7 --name aws-5.80 --kind provider-mirror ./mirror.tar',
    );
  const open = async (c: HubConfig) => {
    const { store, bundles } = await openStores(c);
    return {
      store,
      bundles,
      close: async () => {
        await bundles.close();
        await store.close();
      },
    };
  };
  bundle
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
      '\nExample:\n  hub bundle publish --site all --name modules-2025-06 --kind module ./modules.tar.gz',
    )
    .exitOverride()
    .action(async (file: string, o) => {
      const kind = FileKindSchema.safeParse(o.kind);
      if (!kind.success) {
        console.error(`hub bundle publish: --kind must be one of ${FILE_KINDS.join(', ')}`);
        process.exit(2);
      }
      try {
        if (!statSync(file).isFile()) throw new Error('not a regular file');
      } catch (e) {
        console.error(`hub bundle publish: cannot read ${file}: ${(e as Error).message}`);
        process.exit(2);
      }
      const c = config(o);
      const key = await loadOrCreateHubKey(keyPath(c.dataDir));
      const s = await open(c);
      try {
        const publisher = new BundlePublisher({
          store: s.store,
          bundles: s.bundles,
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
          console.error(`hub bundle publish: ${r.message}`);
          process.exit(2);
        }
        const b = r.bundle;
        await s.store.commit({
          audit: [cliAudit('bundle.publish', `${b.bundleId} ${b.name} → ${b.sites.join(',')}`, Date.now())],
        });
        if (o.json) console.log(JSON.stringify(await bundleDetail(s.bundles, b)));
        else
          console.log(
            `published ${b.bundleId} ${b.name} (${b.fileKind}, ${fmtBytes(b.size)}, sha256 ${b.sha256}) to ${b.sites.join(', ')}`,
          );
      } finally {
        await s.close();
      }
    });
  bundle
    .command('list')
    .description('list published bundles with their delivery counts')
    .option('-c, --config <file>', 'hub.yaml')
    .option('--json', 'machine-readable output')
    .addHelpText('after', '\nExample:\n  hub bundle list --json')
    .exitOverride()
    .action(async (o) => {
      const s = await open(config(o));
      try {
        const out = [];
        for (const b of await s.bundles.listBundles()) out.push(await bundleDetail(s.bundles, b));
        if (o.json) console.log(JSON.stringify({ bundles: out }));
        else
          for (const b of out)
            console.log(
              `${b.bundleId}\t${b.name}\t${b.fileKind}\t${fmtBytes(b.size)}\t${b.deliveries.map((d) => `${d.site}${d.agent ? `/${d.agent}` : ''}:${d.state}`).join(' ')}`,
            );
      } finally {
        await s.close();
      }
    });
}
