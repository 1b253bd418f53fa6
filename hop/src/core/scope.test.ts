import { generateSigningKeyPair, wire2 } from '@driftline/protocol';
import { describe, expect, it } from 'vitest';
import { makeBundle } from '../testing.js';
import { encodePush, pushBundleId } from '../wire2/push.js';
import { scopeBatch } from './scope.js';

const peer = { name: 'ship-7', sites: ['ship-7'] };

describe('scopeBatch', () => {
  it('lets a peer post uplink bundles of its own sites and refuses other sources and downlink', async () => {
    const own = await makeBundle();
    const foreign = await makeBundle({ source: { site: 'ship-8' as never, agent: 'a1' as never } });
    const fromHub = await makeBundle({ source: 'hub' });
    const down = await makeBundle({ kind: 'ack', source: 'hub', destination: { site: 'ship-8' as never } });
    const junk = new Uint8Array([1, 2, 3]);
    const s = scopeBatch(peer, [own.bytes, foreign.bytes, fromHub.bytes, down.bytes, junk], 'relay-1');
    expect(s.allowed).toEqual([own.bytes, junk]);
    expect(s.refused.map((r) => [r.receipt.index, r.reason])).toEqual([
      [1, 'foreign-site'],
      [2, 'foreign-site'],
      [3, 'not-uplink'],
    ]);
    const all = s.complete([
      { bundleId: own.id as never, index: 0, status: 'stored', by: 'relay-1' },
      { bundleId: null, index: 1, status: 'rejected', code: 'bad-bundle', by: 'relay-1' },
    ]);
    expect(all.map((r) => [r.index, r.status, r.code])).toEqual([
      [0, 'stored', undefined],
      [1, 'rejected', 'forbidden'],
      [2, 'rejected', 'forbidden'],
      [3, 'rejected', 'forbidden'],
      [4, 'rejected', 'bad-bundle'],
    ]);
  });

  it('lets a peer with `*` post for any site', async () => {
    const b = await makeBundle({ source: { site: 'ship-9' as never } });
    expect(scopeBatch({ name: 'r', sites: ['*'] }, [b.bytes], 'hub').allowed).toHaveLength(1);
  });

  it('scopes hop v2 messages for a node that pins keys: the hub’s ack is downlink, a push of another site’s key is not the peer’s', async () => {
    const keys = await generateSigningKeyPair();
    const t0 = Date.UTC(2030, 0, 1);
    const push = (from: number) =>
      encodePush(
        { epoch: 1, changes: new Uint8Array(4), blobs: [], priority: 'status' },
        { from, seq: 1, t0 },
        keys.privateKey,
      );
    const [own, foreign, elsewhere] = await Promise.all([push(1), push(2), push(3)]);
    const ack = await wire2.encodeMessage(
      {
        kind: 'ack',
        from: wire2.HUB_NODE_ID,
        to: 1,
        seq: 1,
        body: { upTo: 1, tip: new Uint8Array(8), committedAt: t0 },
      },
      keys.privateKey,
    );
    // the hub's compact publication manifest (decision 505) is downlink too, whatever its kind
    const publication = await wire2.encodeMessage(
      {
        kind: 'publication',
        from: wire2.HUB_NODE_ID,
        to: 9,
        seq: 1,
        body: { id: new Uint8Array(16), name: 'infra', fileKind: 5, inline: new Uint8Array(3) },
      },
      keys.privateKey,
    );
    // keys registered here: 1 for ship-7, 2 for ship-8; 3 registered at a relay below (its site unknown here)
    const owners = new Map([
      [1, { site: 'ship-7', agent: 'a1' }],
      [2, { site: 'ship-8', agent: 'a1' }],
    ]);
    const s = scopeBatch(
      peer,
      [own, foreign, elsewhere, ack, publication],
      'relay-1',
      (from) => owners.get(from) ?? null,
    );
    expect(s.allowed).toEqual([own, elsewhere]);
    expect(s.refused.map((r) => [r.receipt.index, r.reason, r.receipt.code, r.receipt.bundleId])).toEqual([
      [1, 'foreign-site', 'forbidden', pushBundleId(t0, foreign.subarray(foreign.length - 64))],
      [3, 'not-uplink', 'forbidden', null],
      [4, 'not-uplink', 'forbidden', null],
    ]);
    expect(s.refused[0]?.receipt.message).toBe(
      "peer 'ship-7' acts for ship-7, not for the push's source 'ship-8/a1'",
    );
    // a node that pins no keys (the hub: its ingest checks a push's site) passes them unread
    expect(scopeBatch(peer, [foreign, ack], 'hub').allowed).toEqual([foreign, ack]);
  });
});
