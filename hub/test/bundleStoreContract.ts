import { describe, expect, it } from 'vitest';
import type { BundleRow, BundleStore, DeliveryRow } from '../src/ports/BundleStore.js';

/** A publication of `name` (kind `config`) to `sites` at `at`. */
const bundle = (bundleId: string, at: number, sites: string[], name = 'net.tfvars'): BundleRow => ({
  bundleId,
  name,
  fileKind: 'config',
  sha256: 'a'.repeat(64),
  size: 10,
  sites,
  publishedAt: at,
  expiresAt: null,
});

const report = (bundleId: string, site: string, state: DeliveryRow['state'], at: number): DeliveryRow => ({
  bundleId,
  site,
  agent: 'a1',
  state,
  bytes: 10,
  reason: null,
  updatedAt: at,
});

/** One contract every BundleStore adapter passes (STYLE.md, Ports and adapters). */
export function runBundleStoreContract(
  name: string,
  setup: () => Promise<{ bundles: BundleStore; done: () => Promise<void> }>,
) {
  const withStore = (fn: (s: BundleStore) => Promise<void>) => async () => {
    const { bundles, done } = await setup();
    try {
      await fn(bundles);
    } finally {
      await done();
    }
  };

  describe(`BundleStore contract: ${name}`, () => {
    it(
      'records a publication with a queued delivery per site, and lists newest first',
      withStore(async (s) => {
        expect(await s.publish(bundle('B1', 1, ['ship-7', 'ship-8']))).toEqual({});
        await s.publish(bundle('B2', 2, ['ship-8'], 'other'));
        expect(await s.getBundle('B1')).toEqual(bundle('B1', 1, ['ship-7', 'ship-8']));
        expect(await s.getBundle('B9')).toBeNull();
        expect((await s.listBundles()).map((b) => b.bundleId)).toEqual(['B2', 'B1']);
        expect((await s.listBundles('ship-7')).map((b) => b.bundleId)).toEqual(['B1']);
        expect(await s.deliveries('B1')).toEqual(
          ['ship-7', 'ship-8'].map((site) => ({
            bundleId: 'B1',
            site,
            agent: null,
            state: 'queued',
            bytes: 0,
            reason: null,
            updatedAt: 1,
          })),
        );
      }),
    );

    it(
      "replaces a site's queued row with its agents' reports and ignores unknown bundles",
      withStore(async (s) => {
        await s.publish(bundle('B1', 1, ['ship-7']));
        await s.report([report('B1', 'ship-7', 'downloading', 2), report('B9', 'ship-7', 'placed', 2)]);
        await s.report([report('B1', 'ship-7', 'placed', 3)]);
        expect(await s.deliveries('B1')).toEqual([report('B1', 'ship-7', 'placed', 3)]);
        expect(await s.deliveries('B9')).toEqual([]);
      }),
    );

    it(
      'supersedes earlier unexpired publications of the same name and kind, per site, for good',
      withStore(async (s) => {
        await s.publish({ ...bundle('B0', 1, ['ship-9']), expiresAt: 5 });
        await s.publish(bundle('B1', 1, ['ship-7', 'ship-8']));
        await s.report([report('B1', 'ship-8', 'placed', 2)]);
        expect(await s.publish(bundle('B2', 10, ['ship-8']))).toEqual({ 'ship-8': ['B1'] });
        const reason = 'superseded by bundle B2 (same name and kind)';
        expect(await s.deliveries('B1')).toMatchObject([
          { site: 'ship-7', state: 'queued' },
          { site: 'ship-8', agent: 'a1', state: 'superseded', reason, updatedAt: 10, bytes: 10 },
        ]);
        // An agent's report from before it heard keeps the hub's view.
        await s.report([report('B1', 'ship-8', 'placed', 11)]);
        expect((await s.deliveries('B1'))[1]).toMatchObject({ state: 'superseded', reason, updatedAt: 11 });
        // B0 expired at 5: not superseded; B1 at ship-7 is, once, by the next publication there.
        expect(await s.publish(bundle('B3', 12, ['ship-7', 'ship-9']))).toEqual({ 'ship-7': ['B1'] });
        expect(await s.publish(bundle('B4', 13, ['ship-7']))).toEqual({ 'ship-7': ['B3'] });
        expect((await s.deliveries('B0'))[0]?.state).toBe('queued');
      }),
    );
  });
}
