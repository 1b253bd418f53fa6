/**
 * contactWindows (P1b): results crossing three hops whose contact windows do not line up (site → relay-a →
 * relay-b → hub; each hop a cron window of the relay's contact plan, with its light time). Each relay is
 * the real forwarder (`forwardStep`, in-memory custody) on a virtual clock, so a simulated day takes a
 * second. Three numbers per result, from its creation to its arrival at the hub:
 * - floor: the earliest arrival a contact-graph router computes from the same plan (at each hop the first
 *   instant its window is open, plus its light time), with unlimited capacity;
 * - driftline: relays that know each hop's plan, sleep until its window opens and send at once;
 * - naive: store-and-forward relays that know no plan and try every `POLLS_S` seconds (a failed try backs
 *   off to the next poll), the baseline, in the same run.
 * Goal: mean driftline latency ≤ 1.02 × the floor's. Means are over the results that arrived within six
 * simulated hours of the last one: a poll interval that stays in phase with the windows (5 min against
 * 3-minute windows every 20) can miss a hop's every window, and `delivered` says how many got through.
 * Prints one JSON line.
 */
import { parseWindow, type Receipt } from '@driftline/protocol';
import {
  type ContactPlan,
  contactState,
  type ForwardEvent,
  forwardStep,
  MemoryCustody,
  type Upstream,
  type UpstreamSlot,
} from '@driftline/relay/forwarding';
import { emit, isQuick, log } from '../lib/agent.js';

const MIN = 60_000;
const T0 = Date.parse('2026-11-27T00:00:00Z');
const HOURS = isQuick ? 6 : 24;
const RESULTS = isQuick ? 200 : 800;
/** The naive relays' poll intervals: every 30 s, and every 5 min (a relay sparing a metered link). */
const POLLS_S = [30, 300] as const;
const SIZE = 4096;

/** The hops and their windows: misaligned on purpose (each opens after the one before has closed). */
const HOPS = [
  { name: 'site→relay-a', cron: '0,20,40 * * * *', minutes: 4, lightMs: 300 },
  { name: 'relay-a→relay-b', cron: '7,27,47 * * * *', minutes: 3, lightMs: 600 },
  { name: 'relay-b→hub', cron: '13,33,53 * * * *', minutes: 5, lightMs: 12_000 },
] as const;

const planOf = (h: (typeof HOPS)[number]): ContactPlan => {
  const w = parseWindow(`${h.cron} for ${h.minutes}m`);
  if (!w.ok) throw new Error(w.error);
  return { windows: [w.value] };
};
const PLANS = HOPS.map(planOf);
const ALWAYS: ContactPlan = { windows: [] };

/** The first instant at or after `t` that hop `i`'s window is open (the link itself follows the plan). */
function firstOpen(i: number, t: number): number {
  const c = contactState(PLANS[i] as ContactPlan, t);
  if (c.open) return t;
  if (c.opensAt === null) throw new Error(`hop ${HOPS[i]?.name} has no window within a day of ${t}`);
  return c.opensAt;
}

/** Contact-graph earliest arrival at the hub of a result created at `t` (unlimited capacity). */
function floorArrival(t: number): number {
  let at = t;
  for (let i = 0; i < HOPS.length; i++) at = firstOpen(i, at) + HOPS[i]!.lightMs;
  return at;
}

/** A deterministic generator: the same results in every run. */
function lcg(seed: number) {
  let x = seed;
  return () => {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    return x / 2 ** 31;
  };
}

interface Result {
  id: string;
  createdAt: number;
}

/** Runs the three relays on a virtual clock; answers each result's arrival at the hub. */
async function simulate(
  results: readonly Result[],
  mode: 'planned' | 'naive',
  pollS = 30,
): Promise<Map<string, number>> {
  let now = T0;
  const custodies = HOPS.map(() => new MemoryCustody());
  const arrivals = new Map<string, number>();
  // Deliveries in flight: into relay i's custody (i = HOPS.length: the hub) at `at`.
  const inFlight: { at: number; to: number; ids: string[] }[] = results.map((r) => ({
    at: r.createdAt,
    to: 0,
    ids: [r.id],
  }));
  const decoder = new TextDecoder();
  const upstream = (i: number): Upstream => ({
    name: HOPS[i]!.name,
    async postBatch(bundles) {
      // The link is up only inside its window, whatever the relay believes.
      if (!contactState(PLANS[i] as ContactPlan, now).open)
        return { ok: false, code: 'unavailable', message: 'link down', retryable: true } as never;
      const ids = bundles.map((b) => decoder.decode(b.subarray(0, 26)));
      inFlight.push({ at: now + HOPS[i]!.lightMs, to: i + 1, ids });
      const receipts = ids.map((id, index) => ({ bundleId: id, index, status: 'stored', by: HOPS[i]!.name }));
      return { ok: true, receipts: receipts as Receipt[], bytes: bundles.length * SIZE };
    },
    pullDownlink: async () =>
      ({ ok: false, code: 'unavailable', message: 'not used', retryable: true }) as never,
  });
  const slots: UpstreamSlot[] = HOPS.map((_, i) => ({
    upstream: upstream(i),
    plan: mode === 'planned' ? (PLANS[i] as ContactPlan) : ALWAYS,
    failures: 0,
    retryAt: 0,
  }));
  const opts =
    mode === 'planned'
      ? { batchBytes: 1 << 20, batchCount: 256, idleMs: 60_000, backoffBaseMs: 1000, backoffMaxMs: 30_000 }
      : {
          batchBytes: 1 << 20,
          batchCount: 256,
          idleMs: pollS * 1000,
          backoffBaseMs: pollS * 1000,
          backoffMaxMs: pollS * 1000,
        };
  // The naive relay's backoff jitter is turned off (random ≈ 1): it tries every `pollS` seconds.
  const random = mode === 'planned' ? lcg(7) : () => 0.999_999;
  const nextStep = HOPS.map(() => Number.POSITIVE_INFINITY);
  const end = T0 + (HOURS + 6) * 60 * MIN;
  const ignore = (_e: ForwardEvent) => {};
  for (let guard = 0; arrivals.size < results.length && guard < 5_000_000; guard++) {
    const nextDelivery = Math.min(...inFlight.map((f) => f.at));
    const t = Math.min(nextDelivery, ...nextStep);
    if (t > end) break;
    now = t;
    for (let k = inFlight.length - 1; k >= 0; k--) {
      const f = inFlight[k]!;
      if (f.at > now) continue;
      inFlight.splice(k, 1);
      if (f.to === HOPS.length) {
        for (const id of f.ids) arrivals.set(id, now);
        continue;
      }
      const items = f.ids.map((id) => ({
        id,
        dest: 'hub',
        priority: 'status' as const,
        kind: 'doc-delta',
        expiresAt: end + 86_400_000,
        bytes: new Uint8Array(SIZE).fill(32).map((b, j) => (j < 26 ? id.charCodeAt(j) : b)),
      }));
      custodies[f.to]!.accept('down', items, now);
      // A relay steps on every request it takes in.
      nextStep[f.to] = now;
    }
    for (let i = 0; i < HOPS.length; i++) {
      if (nextStep[i]! > now) continue;
      const r = await forwardStep(custodies[i]!, [slots[i]!], opts, () => now, random, ignore);
      nextStep[i] = r.sent > 0 ? now : now + Math.max(1, r.waitMs);
    }
  }
  return arrivals;
}

const rnd = lcg(42);
const results: Result[] = Array.from({ length: RESULTS }, (_, n) => ({
  id: `R${String(n).padStart(25, '0')}`,
  createdAt: Math.round(T0 + rnd() * HOURS * 60 * MIN),
}));
log('contactWindows', 'simulating', { results: RESULTS, hours: HOURS, hops: HOPS.length });
const started = performance.now();
const planned = await simulate(results, 'planned');
const naive = await simulate(results, 'naive', POLLS_S[0]);
const naiveSlow = await simulate(results, 'naive', POLLS_S[1]);
const lat = (m: Map<string, number>) => results.map((r) => (m.get(r.id) ?? Number.NaN) - r.createdAt);
const floor = results.map((r) => floorArrival(r.createdAt) - r.createdAt);
/** Over the results that arrived (a naive relay whose polls fall between windows may deliver few). */
const mean = (xs: number[]) => {
  const ok = xs.filter((x) => Number.isFinite(x));
  return ok.length ? ok.reduce((s, x) => s + x, 0) / ok.length : Number.NaN;
};
const p95 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.95)] ?? Number.NaN;
const plannedLat = lat(planned);
const naiveLat = lat(naive);
const naiveSlowLat = lat(naiveSlow);
/** Mean latency over the floor's, on the results that arrived. */
const vsFloor = (xs: number[]) => {
  const i = xs.map((_x, k) => k).filter((k) => Number.isFinite(xs[k]));
  return i.reduce((s, k) => s + (xs[k] as number), 0) / i.reduce((s, k) => s + (floor[k] as number), 0);
};
const worst = Math.max(...plannedLat.map((x, i) => x / (floor[i] as number)));
const r3 = (x: number) => (Number.isFinite(x) ? Math.round(x * 1000) / 1000 : null);
const out = {
  part: 'contactWindows',
  hops: HOPS.map((h) => `${h.name} ${h.cron} for ${h.minutes} min, light ${h.lightMs} ms`),
  results: RESULTS,
  delivered: { driftline: planned.size, naive: naive.size, naiveSlow: naiveSlow.size },
  floorMeanS: r3(mean(floor) / 1000),
  driftlineMeanS: r3(mean(plannedLat) / 1000),
  naiveMeanS: r3(mean(naiveLat) / 1000),
  naiveSlowMeanS: r3(mean(naiveSlowLat) / 1000),
  driftlineVsFloor: r3(vsFloor(plannedLat)),
  naiveVsFloor: r3(vsFloor(naiveLat)),
  naiveSlowVsFloor: r3(vsFloor(naiveSlowLat)),
  floorP95S: r3(p95(floor) / 1000),
  driftlineP95S: r3(p95(plannedLat) / 1000),
  naiveP95S: r3(p95(naiveLat) / 1000),
  driftlineWorstVsFloor: r3(worst),
  naivePollS: POLLS_S,
  simulatedHours: HOURS,
  wallMs: Math.round(performance.now() - started),
  pass: { within1_02xFloor: vsFloor(plannedLat) <= 1.02 && planned.size === RESULTS },
};
emit(out);
