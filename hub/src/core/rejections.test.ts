import {
  asBundleId,
  decodeBundle,
  decodePayload,
  generateSigningKeyPair,
  MAX_REJECTED_IDS,
  type RejectionPayload,
} from '@driftline/protocol';
import { describe, expect, it } from 'vitest';
import { Rejections, rejectionKey } from './rejections.js';

const id = (n: number) => `01JC${String(n).padStart(22, '0')}`;
let seq = 0;
const ids = { next: () => asBundleId(id(900_000 + seq++)) };

async function payloads(rows: { bytes: Uint8Array }[]): Promise<RejectionPayload[]> {
  return rows.map((r) => {
    const d = decodeBundle(r.bytes);
    if (!d.ok) throw d.error;
    const p = decodePayload('control', d.value.payload);
    if (!p.ok || p.value.type !== 'rejection') throw new Error('not a rejection');
    return p.value;
  });
}

describe('Rejections', () => {
  it('folds a batch into one row per agent and code, keyed so the next one replaces it', async () => {
    const r = new Rejections({ ids, hubPrivateKey: (await generateSigningKeyPair()).privateKey });
    const refusals = Array.from({ length: 250 }, (_, n) => ({
      site: 'ship-7',
      agent: n % 2 ? 'a1' : 'a2',
      code: 'unknown-agent',
      bundleId: id(n),
    }));
    const rows = await r.rows(refusals, 5_000);
    expect(rows.map((x) => x.replaceKey)).toEqual([
      rejectionKey('ship-7', 'a2', 'unknown-agent'),
      rejectionKey('ship-7', 'a1', 'unknown-agent'),
    ]);
    const [a2] = await payloads(rows);
    expect(a2?.count).toBe(125);
    expect(a2?.bundleIds).toHaveLength(MAX_REJECTED_IDS);
    expect(a2?.bundleIds.at(-1)).toBe(id(248));
    expect(rows[0]?.expiresAt).toBe(5_000 + 7 * 86_400_000);
  });

  it('forgets the least recently refused agents past its bound, and an accepted agent at once', async () => {
    const r = new Rejections({
      ids,
      hubPrivateKey: (await generateSigningKeyPair()).privateKey,
      maxAgents: 2,
    });
    const refuse = (agent: string, n: number, at: number) =>
      r.rows([{ site: 's', agent, code: 'unknown-agent', bundleId: id(n) }], at);
    await refuse('a', 1, 1);
    await refuse('b', 2, 2);
    await refuse('a', 3, 3);
    await refuse('c', 4, 4); // b is forgotten, a (refused more recently) is kept
    const [a] = await payloads(await refuse('a', 5, 5));
    const [b] = await payloads(await refuse('b', 6, 6));
    expect([a?.count, a?.firstAt]).toEqual([3, 1]);
    expect([b?.count, b?.firstAt]).toEqual([1, 6]);
    r.accepted('s', 'a');
    const [again] = await payloads(await refuse('a', 7, 7));
    expect([again?.count, again?.bundleIds]).toEqual([1, [id(7)]]);
  });

  it('answers at most maxAgentsPerSite made-up agents of one site, and counts the rest', async () => {
    const dropped: [string, number][] = [];
    const r = new Rejections({
      ids,
      hubPrivateKey: (await generateSigningKeyPair()).privateKey,
      maxAgentsPerSite: 3,
      onDropped: (site, n) => dropped.push([site, n]),
    });
    const refusals = Array.from({ length: 2_000 }, (_, i) => ({
      site: 'ship-7',
      agent: `z${i}`,
      code: 'unknown-agent',
      bundleId: id(i + 1),
    }));
    const rows = await r.rows(refusals, 1);
    expect(rows.map((x) => x.agent)).toEqual(['z0', 'z1', 'z2']);
    expect(dropped).toEqual([['ship-7', 1_997]]);
    // another site is not starved by it, and an agent that has one keeps getting it
    expect(
      (await r.rows([{ site: 'ship-8', agent: 'a1', code: 'unknown-agent', bundleId: id(5000) }], 2)).length,
    ).toBe(1);
    expect(
      (await r.rows([{ site: 'ship-7', agent: 'z1', code: 'unknown-agent', bundleId: id(5001) }], 3)).length,
    ).toBe(1);
    r.accepted('ship-7', 'z0');
    expect(
      (await r.rows([{ site: 'ship-7', agent: 'z9', code: 'unknown-agent', bundleId: id(5002) }], 4)).length,
    ).toBe(1);
  });
});
