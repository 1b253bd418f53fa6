import { summarisePlan } from '@driftline/edge-agent';
import type { PlanSummary } from '@driftline/protocol';
import { buildPlan, FIXED_TIMESTAMP, seededRandom } from '@driftline/simulation';

/** A seeded PRNG (simulation's mulberry32), so every run of a part sees the same mix. */
export const rng = (seed: number) => seededRandom(seed);

export type PlanState = 'clean' | 'changes' | 'drift';

export interface RealPlan {
  component: string;
  /** `terraform show -json` text as the tool prints it (what an Olympus-style agent POSTs). */
  json: string;
  summary: PlanSummary;
  canonical: string;
}

/** A realistic plan from simulation's fake terraform, summarised and redacted by the agent's own code. */
export function realPlan(
  component: string,
  state: PlanState,
  variant: number,
  finishedAtMs: number,
  extraResources = 0,
): RealPlan {
  const { plan } = buildPlan({
    component,
    environment: 'prod',
    state,
    variant,
    seed: 7,
    extraResources,
    terraformVersion: '1.9.8',
    timestamp: FIXED_TIMESTAMP,
  });
  const json = JSON.stringify(plan);
  const finishedAt = new Date(finishedAtMs).toISOString();
  const r = summarisePlan(JSON.parse(json), {
    component,
    environment: 'prod',
    startedAt: new Date(finishedAtMs - 20_000).toISOString(),
    finishedAt,
  });
  if (!r.ok || !r.canonical)
    throw new Error(`fake plan for ${component} did not summarise: ${JSON.stringify(r)}`);
  return { component, json, summary: r.summary, canonical: r.canonical };
}

type CellState = { state: PlanState; variant: number };

/**
 * One re-plan cycle of `n` components: most plans unchanged, some with new changes, a few drifted
 * (what a scheduled re-plan of a stable estate looks like). Returns each component's state per cycle.
 */
export function cycleStates(n: number, cycles: number, seed = 42): CellState[][] {
  return Array.from(liveCycleStates(n, cycles, seed), (current) => current.map((c) => ({ ...c })));
}

/**
 * The cycles of `cycleStates` one at a time, without keeping them: yields the same array each
 * cycle, updated in place (copy what must outlive the next cycle).
 */
export function* liveCycleStates(n: number, cycles: number, seed = 42): Generator<CellState[]> {
  const r = rng(seed);
  const current = Array.from({ length: n }, (_, i) => ({
    state: (i % 5 === 0 ? 'changes' : 'clean') as PlanState,
    variant: 0,
  }));
  yield current;
  for (let k = 1; k < cycles; k++) {
    for (const c of current) {
      const x = r();
      if (x < 0.12) {
        c.state = 'changes';
        c.variant = (c.variant + 1) % 4;
      } else if (x < 0.2) {
        c.state = 'drift';
        c.variant = (c.variant + 1) % 4;
      } else if (x < 0.23) {
        c.state = 'clean';
      }
    }
    yield current;
  }
}
