import { describe, expect, it } from 'vitest';
import type { DeliveryRow, PublicationRow, PublicationStore } from '../src/ports/PublicationStore.js';

/** A publication of `name` (kind `config`) to `sites` at `at`. */
const pub = (publicationId: string, at: number, sites: string[], name = 'net.tfvars'): PublicationRow => ({
  publicationId,
  name,
  fileKind: 'config',
  sha256: 'a'.repeat(64),
  size: 10,
  sites,
  publishedAt: at,
  expiresAt: null,
});

const report = (
  publicationId: string,
  site: string,
  state: DeliveryRow['state'],
  at: number,
): DeliveryRow => ({
  publicationId,
  site,
  agent: 'a1',
  state,
  bytes: 10,
  reason: null,
  updatedAt: at,
});

/** One contract every PublicationStore adapter passes (STYLE.md, Ports and adapters). */
export function runPublicationStoreContract(
  name: string,
  setup: () => Promise<{ publications: PublicationStore; done: () => Promise<void> }>,
) {
  const withStore = (fn: (s: PublicationStore) => Promise<void>) => async () => {
    const { publications, done } = await setup();
    try {
      await fn(publications);
    } finally {
      await done();
    }
  };

  describe(`PublicationStore contract: ${name}`, () => {
    it(
      'records a publication with a queued delivery per site, and lists newest first',
      withStore(async (s) => {
        expect(await s.publish(pub('B1', 1, ['ship-7', 'ship-8']))).toEqual({});
        await s.publish(pub('B2', 2, ['ship-8'], 'other'));
        expect(await s.getPublication('B1')).toEqual(pub('B1', 1, ['ship-7', 'ship-8']));
        expect(await s.getPublication('B9')).toBeNull();
        expect((await s.listPublications()).map((p) => p.publicationId)).toEqual(['B2', 'B1']);
        expect((await s.listPublications('ship-7')).map((p) => p.publicationId)).toEqual(['B1']);
        expect(await s.deliveries('B1')).toEqual(
          ['ship-7', 'ship-8'].map((site) => ({
            publicationId: 'B1',
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
      "replaces a site's queued row with its agents' reports and ignores unknown publications",
      withStore(async (s) => {
        await s.publish(pub('B1', 1, ['ship-7']));
        await s.report([report('B1', 'ship-7', 'downloading', 2), report('B9', 'ship-7', 'placed', 2)]);
        await s.report([report('B1', 'ship-7', 'placed', 3)]);
        expect(await s.deliveries('B1')).toEqual([report('B1', 'ship-7', 'placed', 3)]);
        expect(await s.deliveries('B9')).toEqual([]);
      }),
    );

    it(
      'supersedes earlier unexpired publications of the same name and kind, per site, for good',
      withStore(async (s) => {
        await s.publish({ ...pub('B0', 1, ['ship-9']), expiresAt: 5 });
        await s.publish(pub('B1', 1, ['ship-7', 'ship-8']));
        await s.report([report('B1', 'ship-8', 'placed', 2)]);
        expect(await s.publish(pub('B2', 10, ['ship-8']))).toEqual({ 'ship-8': ['B1'] });
        const reason = 'superseded by publication B2 (same name and kind)';
        expect(await s.deliveries('B1')).toMatchObject([
          { site: 'ship-7', state: 'queued' },
          { site: 'ship-8', agent: 'a1', state: 'superseded', reason, updatedAt: 10, bytes: 10 },
        ]);
        // An agent's report from before it heard keeps the hub's view.
        await s.report([report('B1', 'ship-8', 'placed', 11)]);
        expect((await s.deliveries('B1'))[1]).toMatchObject({ state: 'superseded', reason, updatedAt: 11 });
        // B0 expired at 5: not superseded; B1 at ship-7 is, once, by the next publication there.
        expect(await s.publish(pub('B3', 12, ['ship-7', 'ship-9']))).toEqual({ 'ship-7': ['B1'] });
        expect(await s.publish(pub('B4', 13, ['ship-7']))).toEqual({ 'ship-7': ['B3'] });
        expect((await s.deliveries('B0'))[0]?.state).toBe('queued');
      }),
    );
  });
}
