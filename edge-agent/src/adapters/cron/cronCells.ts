import { cadenceSeconds as cadenceOf, parseZonedSchedule, type Schedule } from '@driftline/protocol';
import type { AgentConfig } from '../../config.js';
import type { CellRef } from '../../core/schedule/CellScheduler.js';

/**
 * Plan schedules run by the module that shows them: protocol's `parseSchedule` (standard cron, in the
 * agent's local time zone) computes each next firing here, the cadence declared to the hub, and the
 * dashboard's reading of it (docs/decisions/430-one-schedule-module.md).
 */

/** The process's time zone: plan schedules are local time, as they were under node-cron. */
export const localZone = (): string => Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';

/**
 * A plan schedule (5 fields, or 6 with seconds first) in local time, or in the zone it ends with (`tz
 * Europe/Berlin`, decision 590); throws on one the config check let by.
 */
export function planSchedule(expression: string, timezone = localZone()): Schedule {
  const r = parseZonedSchedule(expression, { seconds: true, timezone });
  if (!r.ok) throw new Error(r.error);
  return r.value;
}

/** The longest gap between the next few firings of a cron expression, in seconds: the cadence declared to the hub. */
export function cadenceSeconds(expression: string, now = Date.now()): number {
  return cadenceOf(planSchedule(expression), now);
}

/** Declared cadence per cell key `environment/component`. */
export function cadences(config: AgentConfig): Record<string, number> {
  const out: Record<string, number> = {};
  for (const c of config.components) {
    const s = cadenceSeconds(c.schedule);
    for (const e of c.environments) out[`${e.name}/${c.name}`] = s;
  }
  return out;
}

/** The timers a schedule runs on; tests pass their own. */
export interface Timers {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const REAL: Timers = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
};

/** The longest single wait: the clock is looked at again at least this often (a suspend, a clock step). */
const MAX_WAIT_MS = 60_000;

/**
 * Calls `fire` at each occurrence of `schedule`. Occurrences missed while the process slept are not
 * made up one by one: the next look fires once and goes on from now. Returns a stop function.
 */
export function runSchedule(
  schedule: Schedule,
  fire: () => void,
  timers: Timers = REAL,
  maxWaitMs = MAX_WAIT_MS,
): () => void {
  let handle: unknown;
  let stopped = false;
  const arm = (after: number) => {
    const due = schedule.nextAfter(after);
    if (stopped || due === null) return;
    const wait = Math.min(Math.max(0, due - timers.now()), maxWaitMs);
    handle = timers.setTimeout(() => {
      if (stopped) return;
      const now = timers.now();
      if (now < due) return arm(after);
      fire();
      arm(Math.max(due, now));
    }, wait);
  };
  arm(timers.now());
  return () => {
    stopped = true;
    timers.clearTimeout(handle);
  };
}

/** Starts one schedule per component; each firing triggers all its environments. Returns a stop function. */
export function scheduleCells(
  config: AgentConfig,
  trigger: (cell: CellRef) => void,
  timers: Timers = REAL,
): () => void {
  const zone = localZone();
  const stops = config.components.map((c) =>
    runSchedule(
      planSchedule(c.schedule, zone),
      () => {
        for (const e of c.environments) trigger({ component: c.name, environment: e.name });
      },
      timers,
    ),
  );
  return () => {
    for (const stop of stops) stop();
  };
}
