import {
  decodeBundle,
  decodePayload,
  MAX_REJECTED_IDS,
  type RejectionPayload,
  verifyBundle,
} from '@driftline/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { revoke } from '../src/core/enrolment.js';
import { AgentSim } from './agentSim.js';
import { type Harness, makeHarness } from './harness.js';

const open: Harness[] = [];
afterEach(async () => {
  for (const h of open.splice(0)) await h.close();
});

/** The site's downlink as the agent would read it: kind, destination and (for control) the payload. */
async function downlink(h: Harness, site = 'ship-7') {
  const out = [];
  for (const row of await h.store.readDownlink(site, 0, 1000)) {
    const d = decodeBundle(row.bytes);
    if (!d.ok) throw d.error;
    expect(await verifyBundle(d.value, h.hubKeys.publicKey)).toBe(true);
    const p = d.value.header.kind === 'control' ? decodePayload('control', d.value.payload) : null;
    if (p && !p.ok) throw p.error;
    out.push({ kind: d.value.header.kind, to: d.value.header.destination, payload: p?.value });
  }
  return out;
}
const rejections = async (h: Harness, site?: string) =>
  (await downlink(h, site)).map((x) => x.payload as RejectionPayload).filter((p) => p?.type === 'rejection');

describe('rejections on the downlink', () => {
  it('answers 10,000 bundles of an unknown agent with one rejection naming the latest ids and the count', async () => {
    const h = await makeHarness('sqlite');
    open.push(h);
    const a = await AgentSim.create('ship-7', 'a9', h.clock);
    a.plan('prod', 'net');
    const first = h.clock.now();
    const ids: string[] = [];
    for (let batch = 0; batch < 20; batch++) {
      const bundles = await Promise.all(Array.from({ length: 500 }, () => a.delta()));
      const receipts = await h.ingest.accept('relay-1', bundles);
      expect(new Set(receipts.map((r) => r.code))).toEqual(new Set(['unknown-agent']));
      ids.push(...receipts.map((r) => r.bundleId as string));
      h.clock.advance(1_000);
    }
    const rows = await h.store.readDownlink('ship-7', 0, 100_000);
    expect(rows).toHaveLength(1);
    const [only] = await downlink(h);
    expect(only?.to).toEqual({ site: 'ship-7', agent: 'a9' });
    expect(only?.payload).toEqual({
      type: 'rejection',
      site: 'ship-7',
      agent: 'a9',
      code: 'unknown-agent',
      bundleIds: ids.slice(-MAX_REJECTED_IDS),
      count: 10_000,
      firstAt: first,
      lastAt: first + 19_000,
    });
  }, 120_000);

  it('keeps one rejection per agent and code, and none for an agent once its bundles are accepted', async () => {
    const h = await makeHarness('memory');
    open.push(h);
    const a = await AgentSim.create('ship-7', 'a1', h.clock);
    const b = await AgentSim.create('ship-7', 'b2', h.clock);
    await h.enrol(b);
    a.plan('prod', 'net');
    b.plan('prod', 'net');
    await h.ingest.accept('relay-1', [await a.delta(), await b.delta({ signWith: a.keys.privateKey })]);
    await h.ingest.accept('relay-1', [await a.delta(), await b.delta({ signWith: a.keys.privateKey })]);
    expect((await rejections(h)).map((r) => [r.agent, r.code, r.count])).toEqual([
      ['a1', 'unknown-agent', 2],
      ['b2', 'bad-signature', 2],
    ]);

    // a1 is enrolled: its next bundle is merged and acknowledged, and its count starts afresh.
    await h.enrol(a);
    h.clock.advance(1_000);
    const [r] = await h.ingest.accept('relay-1', [await a.delta()]);
    expect(r?.status).toBe('stored');
    expect((await downlink(h)).map((x) => x.kind)).toEqual(['control', 'control', 'ack']);
    await revoke(h.store, 'ship-7', 'a1', h.clock.now());
    await h.ingest.accept('relay-1', [await a.delta()]);
    expect((await rejections(h)).map((r) => [r.agent, r.code, r.count])).toEqual([
      ['a1', 'unknown-agent', 2],
      ['b2', 'bad-signature', 2],
      ['a1', 'revoked-agent', 1],
    ]);
  });

  it('sends nothing for a bundle that names no agent or cannot be read', async () => {
    const h = await makeHarness('memory');
    open.push(h);
    const a = await AgentSim.create('ship-7', 'a1', h.clock);
    a.plan('prod', 'net');
    const receipts = await h.ingest.accept('relay-1', [
      Uint8Array.of(1, 2, 3),
      await a.delta({ source: { site: 'ship-7' } as never }),
    ]);
    expect(receipts.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(await h.store.readDownlink('ship-7', 0, 10)).toEqual([]);
  });
});
