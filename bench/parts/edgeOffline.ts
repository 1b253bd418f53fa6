/**
 * edgeOffline: an agent that cannot reach anyone for weeks, 200 cells re-planned every 15 minutes
 * (synthetic time), recorded the way the daemon records them (app.ts): through the agent's RecordBatcher
 * (group commit within `sync.recordWindowS`, flushed when no other plan is running) into the real
 * SqliteAgentStore (synchronous=FULL, Automerge, epochs, queue bound), the detail packed only when it is
 * stored. Plans finish one synthetic second apart. Reports results recorded, peak RSS of this process,
 * disk used, and the p99 time to load the current document epoch (sampled along the way). Bounded in
 * time: when the bound is hit, `results` says how many were actually measured (nothing is extrapolated).
 */
import { createHash } from 'node:crypto';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import * as A from '@automerge/automerge';
import type { Sha256 } from '@driftline/protocol';
import { packDetail } from '../../edge-agent/src/app.js';
import { AgentConfigSchema } from '../../edge-agent/src/config.js';
import { RecordBatcher } from '../../edge-agent/src/core/record/RecordBatcher.js';
import { agentStore, emit, isQuick, log, newRunId } from '../lib/agent.js';
import { liveCycleStates, type RealPlan, realPlan } from '../lib/plans.js';

const CELLS = 200;
const DAYS = isQuick ? 0.5 : 30;
const CYCLES = Math.round((DAYS * 86_400_000) / (15 * 60_000));
const TIME_BOUND_MS = isQuick ? 60_000 : 40 * 60_000;
const SAMPLE_EVERY = isQuick ? 100 : 1000;

let now = Date.parse('2026-07-01T00:00:00Z');
const clock = () => now;
const store = agentStore(clock);
const ids = newRunId(clock);
const comps = Array.from({ length: CELLS }, (_, i) => `component-${String(i).padStart(3, '0')}`);
const cadenceS = Object.fromEntries(comps.map((c) => [`prod/${c}`, 900]));
const STATE_CYCLES = Math.min(CYCLES, 4000);
/**
 * The sequence `cycleStates(CELLS, STATE_CYCLES, 11)` returns, one cycle at a time and repeating after
 * STATE_CYCLES as before: the whole table for 2,880 cycles took 26 MB of this process's heap (41 MB of
 * RSS), which was counted as the agent's.
 */
function* statesByCycle() {
  for (;;) yield* liveCycleStates(CELLS, STATE_CYCLES, 11);
}
const states = statesByCycle();
// A few real plans (fake terraform, the agent's summariser) stand for every component's plan; the
// component name and plan hash make each one distinct, as they are at a real site.
const base = new Map<string, RealPlan>();
const planOf = (
  comp: string,
  state: 'clean' | 'changes' | 'drift',
  variant: number,
): Omit<RealPlan, 'canonical'> & { canonical: () => string } => {
  const k = `${state}/${variant}`;
  let p = base.get(k);
  if (!p) {
    p = realPlan('component-x', state, variant, now, 4);
    base.set(k, p);
  }
  const planHash = createHash('sha256').update(`${comp}/${k}`).digest('hex') as Sha256;
  return {
    ...p,
    component: comp,
    summary: { ...p.summary, component: comp, planHash, finishedAt: new Date(now).toISOString() },
    canonical: () => (p as RealPlan).canonical.replaceAll('component-x', comp),
  };
};

// The daemon's batcher, its timers on the synthetic clock.
const timers: Array<{ at: number; fn: () => void; cancelled: boolean }> = [];
const fireDue = () => {
  for (const t of timers.splice(0)) {
    if (t.cancelled) continue;
    if (t.at <= now) t.fn();
    else timers.push(t);
  }
};
const batcher = new RecordBatcher({
  recordMany: (inputs) => store.recordMany(inputs),
  setTimer: (ms, fn) => {
    const t = { at: now + ms, fn, cancelled: false };
    timers.push(t);
    return () => {
      t.cancelled = true;
    };
  },
  windowMs: AgentConfigSchema.shape.sync.parse(undefined).recordWindowS * 1000,
  maxBatch: 256,
  // As in app.ts: after a tick's last plan nothing else is running, so it commits at once.
  moreComing: () => !lastOfTick,
});
let lastOfTick = false;

const loads: number[] = [];
const t0 = performance.now();
let results = 0;
let unchanged = 0;
let truncated = false;
for (let cycle = 0; cycle < CYCLES; cycle++) {
  const cs = states.next().value!;
  const committed: Array<Promise<{ unchanged: boolean }>> = [];
  for (const [i, comp] of comps.entries()) {
    now += 1000;
    fireDue();
    lastOfTick = i === comps.length - 1;
    const p = planOf(comp, cs[i]!.state, cs[i]!.variant);
    committed.push(
      batcher.record({
        runId: ids(),
        summary: p.summary,
        detail: () => packDetail(p.canonical()),
        facts: { version: '0.1.0', cadenceS, contactIntervalS: 900 },
      }),
    );
    results++;
    if (results % SAMPLE_EVERY === 0) {
      const epoch = store.status().epoch;
      const s = performance.now();
      const doc = store.loadEpoch(epoch);
      loads.push(performance.now() - s);
      A.free(doc); // the caller owns a loaded document (a restart would keep it as the current one)
      if (performance.now() - t0 > TIME_BOUND_MS) {
        batcher.flush(); // commits the cycle's results still waiting for their window
        truncated = true;
        break;
      }
    }
  }
  for (const r of await Promise.all(committed)) if (r.unchanged) unchanged++;
  if (truncated) break;
  now += 15 * 60_000 - CELLS * 1000;
}
const ms = performance.now() - t0;
const sorted = [...loads].sort((a, b) => a - b);
const p99 = sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)]! : null;
const st = store.status();
const dir = store.db.name.replace(/\/agent\.sqlite$/, '');
const size = (f: string) => {
  try {
    return statSync(join(dir, f)).size;
  } catch {
    return 0;
  }
};
const diskBytes = size('agent.sqlite') + size('agent.sqlite-wal') + size('agent.sqlite-shm');
log('edgeOffline', truncated ? 'time bound reached: results are what was measured' : 'done', {
  planned: CYCLES * CELLS,
  results,
  unchanged,
  msPerResult: +(ms / results).toFixed(2),
  epoch: st.epoch,
  unackedRuns: st.unackedRuns,
  queueBytes: st.queueBytes,
  droppedBlobs: st.dropped.blobs,
  loadSamples: loads.length,
  ...store.stats(),
});
emit({
  results,
  rssMb: Math.round(process.resourceUsage().maxRSS / 1024),
  diskMb: +(diskBytes / 1048576).toFixed(1),
  docLoadP99Ms: p99 === null ? null : +p99.toFixed(1),
});
store.close();
