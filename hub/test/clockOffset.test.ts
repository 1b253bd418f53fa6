import { TRUSTED_CLOCK } from '@driftline/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { nextOffset, OFFSET_WINDOW_MS, siteOffsetUncertainty } from '../src/core/clockOffset.js';
import { toAgentInfo, toSiteSummary } from '../src/core/views.js';
import { AgentSim } from './agentSim.js';
import { type Harness, makeHarness } from './harness.js';

const none = { offsetMs: null, uncertaintyMs: null, sampledAt: null };
const SKEW = 7 * 60_000;
const T = 1_700_000_000_000;

describe('the hub’s offset estimate of an agent', () => {
  it('takes the path’s round-trip estimate rather than one-way transit', () => {
    // Made at true time T (agent clock T + 7 min), arrived after 12 s of transit.
    const transitOnly = nextOffset(none, T + SKEW, T + 12_000);
    expect(transitOnly).toEqual({ offsetMs: SKEW - 12_000, uncertaintyMs: null, sampledAt: T + 12_000 });
    const e = nextOffset(transitOnly, T + SKEW, T + 12_000, { offsetMs: SKEW + 300, uncertaintyMs: 12_100 });
    expect(e).toEqual({ offsetMs: SKEW + 300, uncertaintyMs: 12_100, sampledAt: T + 12_000 });
  });

  it('cuts an estimate by what transit proves: the bundle cannot arrive before it was made', () => {
    // The path says 7 min ± 20 s, but the bundle arrived 1 s after it was made: offset ≥ 7 min − 1 s.
    const e = nextOffset(none, T + SKEW, T + 1000, { offsetMs: SKEW, uncertaintyMs: 20_000 });
    expect(e).toEqual({ offsetMs: SKEW + 9500, uncertaintyMs: 10_500, sampledAt: T + 1000 });
    expect(Math.abs((e.offsetMs ?? 0) - SKEW)).toBeLessThanOrEqual(e.uncertaintyMs ?? 0);
    // An estimate that contradicts it entirely is not used.
    expect(nextOffset(none, T + SKEW, T + 1000, { offsetMs: 0, uncertaintyMs: 50 })).toMatchObject({
      offsetMs: SKEW - 1000,
      uncertaintyMs: null,
    });
  });

  it('keeps the more certain estimate, unless the new one disagrees with it or it is too old', () => {
    const good = { offsetMs: SKEW, uncertaintyMs: 40, sampledAt: T };
    const at = T + 60_000;
    expect(nextOffset(good, at + SKEW - 5000, at, { offsetMs: SKEW + 900, uncertaintyMs: 2000 })).toBe(good);
    // Without an estimate (an old relay on the path), a round-trip estimate stands.
    expect(nextOffset(good, at + SKEW - 5000, at)).toBe(good);
    // The clock was stepped by 30 s: the intervals cannot both hold, the new one wins.
    const stepped = at + SKEW - 30_000;
    expect(nextOffset(good, stepped, at + 5000, { offsetMs: SKEW - 30_000, uncertaintyMs: 2000 })).toEqual({
      offsetMs: SKEW - 30_000,
      uncertaintyMs: 2000,
      sampledAt: at + 5000,
    });
    const later = T + OFFSET_WINDOW_MS + 1;
    expect(
      nextOffset(good, later + SKEW - 2000, later, { offsetMs: SKEW, uncertaintyMs: 900 }),
    ).toMatchObject({
      uncertaintyMs: 900,
    });
  });

  it('does not correct a trusted clock', () => {
    expect(nextOffset(none, T + 5, T + 12_000, TRUSTED_CLOCK)).toEqual({
      offsetMs: 0,
      uncertaintyMs: 0,
      sampledAt: T + 12_000,
    });
  });

  it('gives a site the uncertainty that covers every agent', () => {
    const a = [
      { clockOffsetMs: -300, clockOffsetUncertaintyMs: 40 },
      { clockOffsetMs: -100, clockOffsetUncertaintyMs: 10 },
    ];
    expect(siteOffsetUncertainty(a, -200)).toBe(140);
    expect(
      siteOffsetUncertainty([...a, { clockOffsetMs: 5, clockOffsetUncertaintyMs: null }], -200),
    ).toBeNull();
    expect(siteOffsetUncertainty([], null)).toBeNull();
  });
});

describe('ingest with clock offsets per hop', () => {
  const open: Harness[] = [];
  afterEach(async () => {
    for (const h of open.splice(0)) await h.close();
  });

  it('reads plan times with the estimate the path composed, and shows it with its uncertainty', async () => {
    const h = await makeHarness('sqlite');
    open.push(h);
    const skewed = { now: () => h.clock.now() + SKEW };
    const a = await AgentSim.create('ship-7', 'a1', skewed);
    await h.enrol(a);
    const plannedTrue = h.clock.now();
    const runId = a.plan('prod', 'net', 'drift');
    const delta = await a.delta();
    h.clock.advance(12_000); // a Mars-like transit
    // The path: agent − relay = 7 min + 400 ms ± 900 ms, relay − hub = −400 ms ± 100 ms.
    const clocks = (source: string) =>
      source === 'ship-7/a1' ? { offsetMs: SKEW, uncertaintyMs: 1000 } : null;
    expect((await h.ingest.accept('relay-1', [delta], clocks)).map((r) => r.status)).toEqual(['stored']);

    const agent = await h.store.getAgent('ship-7', 'a1');
    expect(agent).toMatchObject({ clockOffsetMs: SKEW, clockOffsetUncertaintyMs: 1000 });
    const cell = await h.store.getCell('ship-7', 'prod', 'net');
    expect(cell?.plannedAt).toBe(plannedTrue);
    // The lag between planned and received is the transit, not 0 ("at once").
    expect((cell?.receivedAt ?? 0) - (cell?.plannedAt ?? 0)).toBe(12_000);
    expect((await h.store.getRun(runId))?.plannedAt).toBe(plannedTrue);

    expect(toAgentInfo(agent as never)).toMatchObject({
      clockOffsetMs: SKEW,
      clockOffsetUncertaintyMs: 1000,
    });
    const site = await h.store.getSite('ship-7');
    const summary = toSiteSummary(site as never, [agent as never], [], {
      now: h.clock.now(),
      defaultContactIntervalS: 3600,
    });
    expect(summary).toMatchObject({ clockOffsetMs: SKEW, clockOffsetUncertaintyMs: 1000 });
  });

  it('falls back to one-way transit for a bundle that came without an estimate', async () => {
    const h = await makeHarness('memory');
    open.push(h);
    const a = await AgentSim.create('ship-7', 'a1', { now: () => h.clock.now() + SKEW });
    await h.enrol(a);
    a.plan('prod', 'net', 'clean');
    const delta = await a.delta();
    h.clock.advance(12_000);
    await h.ingest.accept('relay-1', [delta]);
    expect(await h.store.getAgent('ship-7', 'a1')).toMatchObject({
      clockOffsetMs: SKEW - 12_000,
      clockOffsetUncertaintyMs: null,
    });
  });

  it('ends the +1 day lie of a hop as a flagged estimate, not as a wrong plannedAt', async () => {
    const h = await makeHarness('sqlite');
    open.push(h);
    const a = await AgentSim.create('ship-7', 'a1', { now: () => h.clock.now() + SKEW });
    await h.enrol(a);
    const honest = (source: string) =>
      source === 'ship-7/a1' ? { offsetMs: SKEW, uncertaintyMs: 200 } : null;
    a.plan('prod', 'net', 'clean');
    const first = await a.delta();
    h.clock.advance(2000);
    await h.ingest.accept('relay-1', [first], honest);
    h.clock.advance(600_000);
    const plannedTrue = h.clock.now();
    const runId = a.plan('prod', 'net', 'drift');
    const delta = await a.delta();
    h.clock.advance(2000);
    const lie = (source: string) =>
      source === 'ship-7/a1' ? { offsetMs: SKEW + 86_400_000, uncertaintyMs: 0 } : null;
    expect((await h.ingest.accept('relay-2', [delta], lie)).map((r) => r.status)).toEqual(['stored']);
    const run = await h.store.getRun(runId);
    expect(Math.abs((run?.plannedAt ?? 0) - plannedTrue)).toBeLessThanOrEqual(200);
    expect(
      Math.abs(((await h.store.getCell('ship-7', 'prod', 'net'))?.plannedAt ?? 0) - plannedTrue),
    ).toBeLessThanOrEqual(200);
    const agent = await h.store.getAgent('ship-7', 'a1');
    expect(agent).toMatchObject({
      clockOffsetMs: SKEW,
      clockHeld: { reason: 'contradicts-bounds', offsetMs: SKEW + 86_400_000, via: 'relay-2' },
    });
    expect(h.clockHeld).toEqual({ 'contradicts-bounds': 1 });
    expect(toAgentInfo(agent as never).clockHeld).toMatchObject({
      reason: 'contradicts-bounds',
      via: 'relay-2',
    });
    const site = await h.store.getSite('ship-7');
    const summary = toSiteSummary(site as never, [agent as never], [], {
      now: h.clock.now(),
      defaultContactIntervalS: 3600,
    });
    expect(summary.clockHeldAgents).toEqual(['a1']);
  });

  it('dates results held 90 s and claimed −90 s at their true time, and flags the jump', async () => {
    const h = await makeHarness('memory');
    open.push(h);
    const a = await AgentSim.create('ship-7', 'a1', { now: () => h.clock.now() + SKEW });
    await h.enrol(a);
    const claim = (o: number) => (source: string) =>
      source === 'ship-7/a1' ? { offsetMs: o, uncertaintyMs: 50 } : null;
    a.plan('prod', 'net', 'clean');
    const first = await a.delta();
    h.clock.advance(1000);
    await h.ingest.accept('relay-1', [first], claim(SKEW));
    h.clock.advance(600_000);
    const plannedTrue = h.clock.now();
    const runId = a.plan('prod', 'net', 'drift');
    const delta = await a.delta();
    h.clock.advance(90_000);
    await h.ingest.accept('relay-1', [delta], claim(SKEW - 90_000));
    expect(Math.abs(((await h.store.getRun(runId))?.plannedAt ?? 0) - plannedTrue)).toBeLessThanOrEqual(50);
    const agent = await h.store.getAgent('ship-7', 'a1');
    expect(agent).toMatchObject({ clockOffsetMs: SKEW, clockHeld: { reason: 'jump', via: 'relay-1' } });
    // Held as claimed, cut by transit (the bundle was made no later than it arrived).
    expect(Math.abs((agent?.clockHeld?.offsetMs ?? 0) - (SKEW - 90_000))).toBeLessThanOrEqual(50);
    expect(h.clockHeld).toEqual({ jump: 1 });
  });
});
