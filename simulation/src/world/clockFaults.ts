import type { RunningAgent } from '@driftline/edge-agent';
import { seededRandom } from '../core/rng.js';
import type { Invariant } from './invariant.js';
import type { World } from './World.js';
import type { SiteLedger } from './WorldLedger.js';

const MIN = 60_000;
const HOUR = 60 * MIN;
/** With `clock`: each agent's clock goes wrong on average once in this long (exponential gaps), ms. */
export const CLOCK_EVERY_MS = 12 * HOUR;
/** A stepped clock is off by 5 minutes to 6 hours, either way. */
const STEP_MS = { min: 5 * MIN, max: 6 * HOUR };
/** A skewed clock gains or loses 1 to 20 ms a second (3.6 s to 72 s an hour). */
const SKEW = { min: 0.001, max: 0.02 };
/** An episode lasts 30 minutes to 6 hours; then the clock is set right (a step back to the world's time). */
const EPISODE_MS = { min: 30 * MIN, max: 6 * HOUR };

/** One stretch of an agent's clock: from world time `from` until `to`, off by `offsetMs + rate × (t − from)`. */
export interface ClockEpisode {
  kind: 'step' | 'skew';
  from: number;
  to: number;
  offsetMs: number;
  rate: number;
}

/** What the hub stated of one run's date against when it really ended (the `clock` fault's invariant). */
export interface AgeFigures {
  /** Runs the hub committed whose true end the world knows. */
  checked: number;
  /** Within the agent's stated uncertainty at the commit. */
  within: number;
  /** Outside it, while the hub marked the agent's clock as held (not confidently wrong: flagged). */
  flagged: number;
  /** Dated with a one-way bound only (the hub states no uncertainty: "no round trip yet"). */
  unbounded: number;
  /** Outside the stated uncertainty and not flagged: a confidently wrong age. */
  wrong: number;
  /** Largest error among those within, ms (how tight the statements were). */
  maxErrorMs: number;
  examples: string[];
}

/**
 * The `clock` fault (docs/decisions/540-deterministic-world.md): each agent's clock (its `now`, the
 * agent's clock port, `StartOptions.now`) differs from the world's by an offset that changes in episodes
 * drawn from `${seed}:clock`: a step of 5 min to 6 h either way, or a skew of 1 to 20 ms a second, each for
 * 30 min to 6 h, then set right. The world's one clock stays true: timers (cron, backoff) run on it, as
 * a machine's monotonic timers would; what the agent stamps (run ends, bundle `created`, `Driftline-Sent`)
 * reads its own. Episodes are a function of world time fixed before the days begin, so they need no timers.
 *
 * The hub's dates are checked against the truth as it commits them: every run's `plannedAt` is within the
 * agent's stated `clockOffsetUncertaintyMs` of when it really ended, or the agent's clock is marked held
 * (`clockHeld`, decision 230): a lying clock gives a flagged date, never a confidently wrong one.
 */
export class ClockFaults {
  /** Each run's true end (world time), noted as its agent records it. */
  private readonly trueEnd = new Map<string, number>();
  readonly ages: AgeFigures = {
    checked: 0,
    within: 0,
    flagged: 0,
    unbounded: 0,
    wrong: 0,
    maxErrorMs: 0,
    examples: [],
  };
  private checking: Promise<void> = Promise.resolve();

  constructor(private readonly episodes: ReadonlyMap<string, readonly ClockEpisode[]>) {}

  /**
   * The episodes of `sites` agents (named by `name`) over `daysMs` from `start`, drawn from `${seed}:clock`:
   * gaps with a mean of {@link CLOCK_EVERY_MS}, 6 in 10 a step, the rest a skew.
   */
  static drawn(seed: number, sites: number, daysMs: number, start: number, name: (i: number) => string) {
    const random = seededRandom(`${seed}:clock`);
    const draw = (r: { min: number; max: number }) => r.min + random() * (r.max - r.min);
    const episodes = new Map<string, ClockEpisode[]>();
    for (let i = 0; i < sites; i++) {
      const list: ClockEpisode[] = [];
      let at = 0;
      for (;;) {
        at += Math.ceil(-Math.log(1 - random()) * CLOCK_EVERY_MS);
        if (at >= daysMs) break;
        const sign = random() < 0.5 ? -1 : 1;
        const step = random() < 0.6;
        const length = Math.round(draw(EPISODE_MS));
        list.push({
          kind: step ? 'step' : 'skew',
          from: start + at,
          to: start + at + length,
          offsetMs: step ? sign * Math.round(draw(STEP_MS)) : 0,
          rate: step ? 0 : sign * draw(SKEW),
        });
        at += length;
      }
      episodes.set(name(i), list);
    }
    return new ClockFaults(episodes);
  }

  /** The agent's clock minus the world's at world time `t`, ms. */
  offsetAt(site: string, t: number): number {
    for (const e of this.episodes.get(site) ?? [])
      if (t >= e.from && t < e.to) return e.offsetMs + Math.round(e.rate * (t - e.from));
    return 0;
  }

  /** The agent's clock (its `StartOptions.now`). */
  now(site: string): () => number {
    return () => {
      const t = Date.now();
      return t + this.offsetAt(site, t);
    };
  }

  /** Episodes begun by world time `t` (the fault happened), and how many were steps. */
  begun(t: number): { count: number; steps: number; largestMs: number } {
    let count = 0;
    let steps = 0;
    let largestMs = 0;
    for (const list of this.episodes.values())
      for (const e of list) {
        if (e.from > t) continue;
        count++;
        if (e.kind === 'step') steps++;
        largestMs = Math.max(largestMs, Math.abs(e.offsetMs), Math.abs(Math.round(e.rate * (e.to - e.from))));
      }
    return { count, steps, largestMs };
  }

  /**
   * When an agent time `agentMs` read at `site` was, in world time: the latest moment no later than `by`
   * (its recording) at which the agent's clock read it. A clock stepped back reads some times twice.
   */
  worldTimeOf(site: string, agentMs: number, by: number): number {
    let best = agentMs; // outside every episode the clocks agree
    let found = agentMs <= by && this.offsetAt(site, agentMs) === 0;
    for (const e of this.episodes.get(site) ?? []) {
      // agentMs = t + offsetMs + rate × (t − from), for t in [from, to)
      const t = Math.round((agentMs - e.offsetMs + e.rate * e.from) / (1 + e.rate));
      for (const c of [t - 1, t, t + 1])
        if (
          c >= e.from &&
          c < e.to &&
          c <= by &&
          c + this.offsetAt(site, c) === agentMs &&
          (!found || c > best)
        ) {
          best = c;
          found = true;
        }
    }
    return best;
  }

  /** Watches `world`: each run's true end as its agent records it, each commit's dates against the truth. */
  watch(world: World): void {
    const watchAgent = world.ledger.watchAgent.bind(world.ledger);
    world.ledger.watchAgent = (site: SiteLedger, agent: RunningAgent) => {
      watchAgent(site, agent);
      const now = Date.now();
      for (const [id, r] of site.recorded)
        if (!this.trueEnd.has(id)) this.trueEnd.set(id, this.worldTimeOf(site.site, r.finishedAt, now));
    };
    world.hubCommits.add((c) => {
      const runs = c.runs.filter((r) => this.trueEnd.has(r.runId));
      if (runs.length === 0) return;
      const hub = world.hub;
      // the agent's row as this commit left it: the uncertainty the hub states with these dates
      this.checking = this.checking.then(async () => {
        for (const r of runs) {
          const row = await hub.store.getAgent(r.site, r.agent).catch(() => null);
          this.judge(r, row);
        }
      });
    });
  }

  /** Every commit's dates judged (the checks read the hub's store after each commit). */
  settled(): Promise<void> {
    return this.checking;
  }

  private judge(
    r: { runId: string; site: string; plannedAt: number },
    row: { clockOffsetUncertaintyMs?: number | null; clockHeld?: unknown } | null,
  ): void {
    const truth = this.trueEnd.get(r.runId);
    if (truth === undefined) return;
    const a = this.ages;
    a.checked++;
    const error = r.plannedAt - truth;
    const u = row?.clockOffsetUncertaintyMs ?? null;
    if (u !== null && Math.abs(error) <= u) {
      a.within++;
      a.maxErrorMs = Math.max(a.maxErrorMs, Math.abs(error));
    } else if (row?.clockHeld) a.flagged++;
    else if (u === null) a.unbounded++;
    else {
      a.wrong++;
      if (a.examples.length < 5)
        a.examples.push(
          `${r.site} run ${r.runId} dated ${new Date(r.plannedAt).toISOString()}, ended ${new Date(truth).toISOString()} (off ${error} ms, stated ± ${u} ms, agent clock off ${this.offsetAt(r.site, truth)} ms then)`,
        );
    }
  }
}

/** What the `clock` fault's runs must show: clocks went wrong, and no age the hub stated was confidently wrong. */
export function clockInvariants(c: ClockFaults, end: number): Invariant[] {
  const a = c.ages;
  const b = c.begun(end);
  return [
    {
      name: 'ages within their stated uncertainty',
      held: b.count > 0 && a.checked > 0 && a.wrong === 0,
      detail:
        a.wrong > 0
          ? `${a.wrong} of ${a.checked} runs dated outside the agent's stated uncertainty with its clock not marked: ${a.examples.slice(0, 3).join('; ')}`
          : `${b.count} agent clock episodes (${b.steps} steps, ${b.count - b.steps} skews, at most ${Math.round(b.largestMs / MIN)} min off); ${a.checked} runs dated by the hub: ${a.within} within the stated uncertainty (largest error ${a.maxErrorMs} ms), ${a.flagged} outside it with the agent's clock marked held, ${a.unbounded} with no stated uncertainty (a one-way bound)`,
    },
  ];
}
