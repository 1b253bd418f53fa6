import { encodePush, pushFormsOf } from '@driftline/hop';
import {
  type ClockEstimate,
  concatBytes,
  decodeBundle,
  decodePayload,
  signBytes,
  wire2,
} from '@driftline/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import type { TestHub } from './hubFixture.js';
import { wire2Hub } from './wire2Fixture.js';

/**
 * The agent's clock term in a v2 push it posts to the hub itself (push field 10,
 * docs/decisions/495-hop-v2-on-the-agent-link.md): the hub reads it as v1's `driftline-clock` from an agent
 * posting directly, so the push's results are dated from a round trip, not by one-way transit.
 */
let h: TestHub | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** The agent's clock is 7 minutes slow; its push reaches the hub 1 s after it was sent. */
const SKEW_MS = -420_000;
const TRANSIT_MS = 1000;

/** An agent that planned one cell, its push sent at its own clock's `t0` and taken at the hub a second on. */
async function planAndPush(clock: ClockEstimate | null) {
  const r = await wire2Hub();
  h = r.hub;
  const { agent, client, info, hub } = r;
  const plannedAt = hub.clock.now(); // the agent's clock: the hub's read it 7 min later
  const runId = agent.plan('prod', 'net', 'drift');
  hub.clock.advance(-SKEW_MS + TRANSIT_MS + 1000);
  const b = decodeBundle(await agent.delta());
  const p = b.ok ? decodePayload('doc-delta', b.value.payload) : null;
  if (!p?.ok) throw new Error('no delta');
  const push = await encodePush(
    { ...p.value, priority: 'status' },
    { from: info.value.from, seq: 1, t0: plannedAt + 1000, clock },
    agent.keys.privateKey,
    pushFormsOf(info.value.pushForms),
  );
  const answer = await client.exchangeWire2(push);
  client.abort();
  if (!answer.ok) throw new Error(answer.message);
  return {
    info,
    row: await hub.hub.store.getAgent('ship-7', 'a1'),
    run: await hub.hub.store.getRun(runId),
    truePlannedAt: plannedAt - SKEW_MS,
  };
}

describe("a v2 push's clock term at the hub", () => {
  it('is read as the agent’s clock minus the hub’s, cut by transit, and dates the push’s run within it', async () => {
    const term = { offsetMs: SKEW_MS + 5, uncertaintyMs: 600 };
    const { info, row, run, truePlannedAt } = await planAndPush(term);
    expect(info.value.pushForms).toContain(wire2.PUSH_FORM_CLOCK);
    // within transit's bound (offset ≥ −421 s) the term stands whole: −419,995 ms ± 600 ms
    expect(row?.clockOffsetMs).toBe(term.offsetMs);
    expect(row?.clockOffsetUncertaintyMs).toBe(term.uncertaintyMs);
    expect(Math.abs((run?.plannedAt ?? 0) - truePlannedAt)).toBeLessThanOrEqual(term.uncertaintyMs);
  });

  it('without it the hub has only one-way transit, which cannot see a slow clock: the run is dated 7 min early', async () => {
    const { row, run, truePlannedAt } = await planAndPush(null);
    expect(row?.clockOffsetUncertaintyMs ?? null).toBeNull();
    // transit bounds the offset from below only (−421 s): the offset of the agent's first bundle stands
    expect(row?.clockOffsetMs).toBe(0);
    expect((run?.plannedAt ?? 0) - truePlannedAt).toBe(SKEW_MS);
  });

  it('refuses a push whose term is mistyped, naming field 10, and stores nothing of it', async () => {
    const r = await wire2Hub();
    h = r.hub;
    const { agent, client, info, hub } = r;
    const runId = agent.plan('prod', 'net', 'drift');
    const b = decodeBundle(await agent.delta());
    const p = b.ok ? decodePayload('doc-delta', b.value.payload) : null;
    if (!p?.ok) throw new Error('no delta');
    // signed by the agent's own key: only the term is wrong (its offset negative, outside the subset's
    // uints, written as a text)
    const body = new Map<number, wire2.Value>([
      [1, p.value.epoch],
      [2, p.value.changes],
      [6, hub.clock.now()],
      [10, ['-420000', 600]],
    ]);
    const unsigned = wire2.cborEncodeValue([2, wire2.KINDS.push, info.value.from, 0, 1, body]);
    const signature = await signBytes(agent.keys.privateKey, concatBytes(wire2.WIRE2_DOMAIN, unsigned));
    const message = concatBytes(unsigned, wire2.cborHead(2, 64), signature);
    message[0] = 0x87;
    const answer = await client.exchangeWire2(message);
    client.abort();
    expect(answer.ok ? 'taken' : answer.message).toMatch(/field 10 \(clock\) is not two uints/);
    expect(await hub.hub.store.getRun(runId)).toBeNull();
  });
});
