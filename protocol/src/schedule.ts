import { Cron } from 'croner';
import { splitZone } from './timeZone.js';

/**
 * Cron schedules: the one reader of cron expressions in Driftline, for the agent's plan schedules
 * (`components[].schedule`, run and declared as a cadence), contact windows (hub, relay, agent) and the
 * dashboard's "next window". Built on croner (docs/decisions/430-one-schedule-module.md), with standard
 * semantics: when both day-of-month and day-of-week are restricted either one matches (`0 6 1 * 1` is the
 * 1st of the month and every Monday); 0 and 7 are Sunday; `*`, `n`, `a-b`, lists, `*\/n`, `a-b/n`, `a/n`,
 * month and day names. A step wider than its field (`*\/90` minutes) is refused: cron would fire it at
 * minute 0 only, never every 90 minutes. Times are evaluated in `timezone` (IANA name; default UTC), through its DST changes:
 * a time skipped by the spring change runs just after it, a time repeated in autumn runs once.
 *
 * Pure: no I/O and no timers (runs in the browser too); every search is bounded by the calendar.
 */

/** Options of {@link parseSchedule}. */
export interface ScheduleOptions {
  /** IANA time zone the fields are read in (`Europe/Oslo`); default `UTC`. */
  timezone?: string;
  /** Allow a sixth, leading seconds field (`*\/10 * * * * *`), as plan schedules may. Default false. */
  seconds?: boolean;
}

/** A parsed cron expression: next and previous occurrences in epoch milliseconds. Immutable. */
export class Schedule {
  readonly #cron: Cron;

  /** @internal use {@link parseSchedule}. */
  constructor(
    readonly expression: string,
    readonly timezone: string,
    cron: Cron,
  ) {
    this.#cron = cron;
  }

  /** The first occurrence strictly after `ms`, or null when there is none (`0 0 30 2 *`). */
  nextAfter(ms: number): number | null {
    const d = this.#cron.nextRun(new Date(ms));
    return d ? d.getTime() : null;
  }

  /** The last occurrence at or before `ms`, or null when there is none. */
  latestAtOrBefore(ms: number): number | null {
    // croner's previous runs are strictly before the reference, at whole seconds.
    const [d] = this.#cron.previousRuns(1, new Date(Math.floor(ms / 1000) * 1000 + 1000));
    return d ? d.getTime() : null;
  }

  /** The next `n` occurrences strictly after `ms` (fewer when the expression runs out). */
  nextRuns(n: number, ms: number): number[] {
    return this.#cron.nextRuns(n, new Date(ms)).map((d) => d.getTime());
  }
}

const MAX_EXPRESSION = 200;
const cache = new Map<string, Schedule>();
const CACHE_SIZE = 512;

/**
 * Reads a cron expression (five fields, or six with `seconds`), or says why it is not one.
 * Parsed schedules are cached (they are immutable), so callers may parse on every judgement.
 */
export function parseSchedule(
  expression: string,
  options: ScheduleOptions = {},
): { ok: true; value: Schedule } | { ok: false; error: string } {
  const text = expression.trim().replace(/\s+/g, ' ');
  const timezone = options.timezone ?? 'UTC';
  const key = `${options.seconds ? 6 : 5}|${timezone}|${text}`;
  const hit = cache.get(key);
  if (hit) return { ok: true, value: hit };
  if (text.length > MAX_EXPRESSION)
    return { ok: false, error: `a cron expression is at most ${MAX_EXPRESSION} characters` };
  // croner reads a text with ':' as one date and '@daily' as a nickname: neither is a cron expression here.
  if (text.startsWith('@') || text.includes(':'))
    return {
      ok: false,
      error: `'${text}' is not a cron expression (minute hour day-of-month month day-of-week)`,
    };
  const fields = text.split(' ').length;
  if (fields !== 5 && !(options.seconds && fields === 6))
    return {
      ok: false,
      error: `cron '${text}' has ${fields} field${fields === 1 ? '' : 's'}; write 5: minute hour day-of-month month day-of-week${options.seconds ? ' (or 6, seconds first)' : ''}`,
    };
  let cron: Cron;
  try {
    cron = new Cron(text, {
      paused: true,
      // `2/6` (from 2, every 6th, as the parsers before this one read it) stays accepted.
      sloppyRanges: true,
      mode: fields === 6 ? '6-part' : '5-part',
      ...(timezone === 'UTC' ? { utcOffset: 0 } : { timezone }),
    });
    // An unknown time zone is only noticed when a date is computed.
    cron.nextRun(new Date(0));
  } catch (e) {
    let why = (e instanceof Error ? e.message : String(e))
      .replace(/^Cron\w*: /, '')
      .split('. Original error')[0];
    if (why?.includes('steps cannot be greater'))
      why =
        "a step wider than its field never repeats within it (cron reads '*/90' minutes as minute 0 only); for a longer period write a window 'every 90m for 10m from <ISO time>'";
    return { ok: false, error: `cron '${text}'${timezone === 'UTC' ? '' : ` in ${timezone}`}: ${why}` };
  }
  const value = new Schedule(text, timezone, cron);
  if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value as string);
  cache.set(key, value);
  return { ok: true, value };
}

/**
 * The longest gap between the next `samples` occurrences after `fromMs`, in seconds: the cadence a
 * plan schedule declares (`0 9,17 * * *` → 16 h). 0 when the expression fires fewer than twice.
 */
export function cadenceSeconds(schedule: Schedule, fromMs: number, samples = 8): number {
  const runs = schedule.nextRuns(samples, fromMs);
  let max = 0;
  for (let i = 1; i < runs.length; i++) max = Math.max(max, (runs[i] as number) - (runs[i - 1] as number));
  return Math.round(max / 1000);
}

/**
 * A schedule that may end with an IANA zone, ` tz Europe/Berlin` (the suffix contact windows take too:
 * docs/decisions/590-windows-declared-once.md): read in that zone, else in `options.timezone`.
 */
export function parseZonedSchedule(
  expression: string,
  options: ScheduleOptions = {},
): { ok: true; value: Schedule } | { ok: false; error: string } {
  const text = expression.trim().replace(/\s+/g, ' ');
  const z = splitZone(text);
  if (!z.ok) return { ok: false, error: `schedule '${text}': ${z.error}` };
  return parseSchedule(z.body, z.zone ? { ...options, timezone: z.zone } : options);
}
