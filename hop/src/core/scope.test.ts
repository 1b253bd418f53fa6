import { describe, expect, it } from 'vitest';
import { makeBundle } from '../testing.js';
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
});
