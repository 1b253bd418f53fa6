import { expect, it } from 'vitest';
import type { PeerRow, PeopleStore } from '../src/ports/HubStore.js';

type WithStore = (fn: (s: PeopleStore) => Promise<void>) => () => Promise<void>;

/** The peers part of the HubStore contract (`hub peer list|add|revoke|rotate`; run inside `runHubStoreContract`). */
export function runPeerStoreContract(withStore: WithStore) {
  const peer = (tokenSha256: string, name: string, createdAt: number): PeerRow => ({
    tokenSha256,
    name,
    sites: ['ship-7'],
    createdAt,
    lastUsedAt: null,
    revokedAt: null,
  });

  it(
    'lists peers by name then age, and reads a row written before peers had dates',
    withStore(async (s) => {
      await s.commit({
        peers: [
          peer('b1', 'relay-2', 5),
          peer('a2', 'relay-1', 9),
          { tokenSha256: 'a1', name: 'relay-1', sites: ['*'] },
        ],
      });
      expect((await s.listPeers()).map((p) => p.tokenSha256)).toEqual(['a1', 'a2', 'b1']);
      expect(await s.peerByToken('a1')).toEqual({ tokenSha256: 'a1', name: 'relay-1', sites: ['*'] });
    }),
  );

  it(
    'records when a peer token was last used without touching the rest of its row',
    withStore(async (s) => {
      await s.commit({ peers: [peer('t1', 'relay-1', 1)] });
      // a revocation written meanwhile (another process) stays: the use only sets lastUsedAt
      await s.commit({ peers: [{ ...peer('t1', 'relay-1', 1), revokedAt: 50 }] });
      await s.commit({
        peerUses: [
          { tokenSha256: 't1', at: 40 },
          { tokenSha256: 'nobody', at: 40 },
        ],
      });
      expect(await s.peerByToken('t1')).toMatchObject({ lastUsedAt: 40, revokedAt: 50, sites: ['ship-7'] });
      expect(await s.peerByToken('nobody')).toBeNull();
      expect(await s.listPeers()).toHaveLength(1);
    }),
  );

  it(
    "keeps a relay's latest status in its token's row without touching the rest of it",
    withStore(async (s) => {
      await s.commit({ peers: [{ ...peer('t1', 'relay-1', 1), lastUsedAt: 30 }] });
      const status = {
        at: 5,
        version: '0.1.0',
        custody: { bundles: 2, bytes: 10, oldestAt: 4 },
        upstreamRefusals: { forbidden: 3 },
        sitesRefused: ['ship-8'],
        sites: ['ship-7'],
        upstreams: [{ name: 'hub', ok: false, code: 'unreachable', message: 'down' }],
      };
      await s.commit({
        peerStatuses: [
          { tokenSha256: 't1', status, at: 60 },
          { tokenSha256: 'nobody', status, at: 60 },
        ],
      });
      expect(await s.peerByToken('t1')).toMatchObject({
        status,
        statusAt: 60,
        lastUsedAt: 30,
        sites: ['ship-7'],
      });
      await s.commit({
        peerStatuses: [{ tokenSha256: 't1', status: { ...status, sitesRefused: [] }, at: 120 }],
      });
      expect((await s.listPeers())[0]).toMatchObject({ status: { sitesRefused: [] }, statusAt: 120 });
      expect(await s.peerByToken('nobody')).toBeNull();
    }),
  );
}
