import type { parseSchedule, ScheduleOptions } from '../src/schedule.js';

/**
 * Awkward cron expressions and what standard cron does with them: the table the schedule module is held
 * to in Node (protocol/src/schedule.test.ts), under the dashboard's test environment and in Chromium
 * (ui/test/schedule.test.ts, ui/test/e2e/schedule.test.ts). Times are ISO 8601 in UTC.
 */
export interface ScheduleCase {
  what: string;
  expression: string;
  options?: ScheduleOptions;
  /** Reference time. */
  from: string;
  /** The next occurrences strictly after `from`, in order. */
  next?: string[];
  /** The last occurrence at or before `from`. */
  latest?: string | null;
  /** Not a schedule: the error names this. */
  rejects?: string;
}

export const SCHEDULE_CASES: readonly ScheduleCase[] = [
  {
    what: 'both day fields restricted: day-of-month OR day-of-week',
    expression: '0 6 1 * 1',
    from: '2026-12-02T00:00:00Z',
    next: ['2026-12-07T06:00:00.000Z', '2026-12-14T06:00:00.000Z'],
    latest: '2026-12-01T06:00:00.000Z',
  },
  {
    what: 'Friday or the 13th (either matches)',
    expression: '0 2 13 * 5',
    from: '2026-11-02T00:00:00Z',
    next: ['2026-11-06T02:00:00.000Z', '2026-11-13T02:00:00.000Z', '2026-11-20T02:00:00.000Z'],
  },
  {
    what: '7 is Sunday',
    expression: '0 6 * * 7',
    from: '2026-12-02T00:00:00Z',
    next: ['2026-12-06T06:00:00.000Z', '2026-12-13T06:00:00.000Z'],
  },
  {
    what: 'a range ending at 7 covers Sunday',
    expression: '0 6 * * 5-7',
    from: '2026-12-05T07:00:00Z',
    next: ['2026-12-06T06:00:00.000Z', '2026-12-11T06:00:00.000Z'],
  },
  {
    what: 'day names and a weekday range',
    expression: '0 12 * * MON-FRI',
    from: '2026-12-04T13:00:00Z',
    next: ['2026-12-07T12:00:00.000Z'],
    latest: '2026-12-04T12:00:00.000Z',
  },
  {
    what: 'a step over the whole field',
    expression: '*/15 * * * *',
    from: '2026-12-02T12:07:00Z',
    next: ['2026-12-02T12:15:00.000Z', '2026-12-02T12:30:00.000Z'],
    latest: '2026-12-02T12:00:00.000Z',
  },
  {
    what: 'a step within a range, a list of hours',
    expression: '10-50/20 9,17 * * *',
    from: '2026-12-02T09:31:00Z',
    next: ['2026-12-02T09:50:00.000Z', '2026-12-02T17:10:00.000Z'],
  },
  {
    what: 'a step from a start value (from 2, every 6th hour)',
    expression: '30 2/6 * * *',
    from: '2026-12-02T03:00:00Z',
    next: [
      '2026-12-02T08:30:00.000Z',
      '2026-12-02T14:30:00.000Z',
      '2026-12-02T20:30:00.000Z',
      '2026-12-03T02:30:00.000Z',
    ],
  },
  {
    what: 'an occurrence exactly at the reference is latest, not next',
    expression: '0 2 * * *',
    from: '2026-12-02T02:00:00Z',
    next: ['2026-12-03T02:00:00.000Z'],
    latest: '2026-12-02T02:00:00.000Z',
  },
  {
    what: 'the 29th of February, years away',
    expression: '0 0 29 2 *',
    from: '2026-03-01T00:00:00Z',
    next: ['2028-02-29T00:00:00.000Z'],
    latest: '2024-02-29T00:00:00.000Z',
  },
  {
    what: 'a day that never comes',
    expression: '0 0 30 2 *',
    from: '2026-03-01T00:00:00Z',
    next: [],
    latest: null,
  },
  {
    what: 'a zone: 02:30 in Berlin is 01:30 UTC in winter',
    expression: '30 2 * * *',
    options: { timezone: 'Europe/Berlin' },
    from: '2026-03-27T12:00:00Z',
    // 28 March CET; 29 March the clocks skip 02:00–03:00, so the run comes at 03:00 CEST; then CEST.
    next: ['2026-03-28T01:30:00.000Z', '2026-03-29T01:00:00.000Z', '2026-03-30T00:30:00.000Z'],
  },
  {
    what: 'a zone: the repeated autumn hour runs once',
    expression: '30 2 * * *',
    options: { timezone: 'Europe/Berlin' },
    from: '2026-10-24T12:00:00Z',
    next: ['2026-10-25T00:30:00.000Z', '2026-10-26T01:30:00.000Z'],
  },
  {
    what: 'a zone: an hourly schedule keeps every real hour through the autumn change',
    expression: '0 * * * *',
    options: { timezone: 'America/New_York' },
    from: '2026-11-01T04:30:00Z',
    next: ['2026-11-01T05:00:00.000Z', '2026-11-01T06:00:00.000Z', '2026-11-01T07:00:00.000Z'],
  },
  {
    what: 'a seconds field where plan schedules allow it',
    expression: '*/10 * * * * *',
    options: { seconds: true },
    from: '2026-12-02T12:00:05Z',
    next: ['2026-12-02T12:00:10.000Z', '2026-12-02T12:00:20.000Z'],
  },
  {
    what: 'six fields where five are due',
    expression: '*/10 * * * * *',
    from: '2026-12-02T00:00:00Z',
    rejects: 'has 6 fields; write 5',
  },
  {
    what: 'a step wider than its field',
    expression: '*/90 * * * *',
    from: '2026-12-02T00:00:00Z',
    rejects: 'a step wider than its field',
  },
  { what: 'minute 61', expression: '61 * * * *', from: '2026-12-02T00:00:00Z', rejects: 'minute' },
  { what: 'day-of-week 8', expression: '0 6 * * 8', from: '2026-12-02T00:00:00Z', rejects: 'dayOfWeek' },
  {
    what: 'three fields',
    expression: '* * *',
    from: '2026-12-02T00:00:00Z',
    rejects: "cron '* * *' has 3 fields",
  },
  { what: 'a word', expression: 'x * * * *', from: '2026-12-02T00:00:00Z', rejects: 'illegal' },
  {
    what: 'an unknown zone',
    expression: '0 0 * * *',
    options: { timezone: 'Mars/Olympus' },
    from: '2026-12-02T00:00:00Z',
    rejects: 'Mars/Olympus',
  },
  {
    what: 'a nickname',
    expression: '@daily',
    from: '2026-12-02T00:00:00Z',
    rejects: 'not a cron expression',
  },
];

/** Runs every case against `parse`; returns one line per disagreement (empty: all agree). */
export function checkScheduleCases(parse: typeof parseSchedule): string[] {
  const wrong: string[] = [];
  const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
  for (const c of SCHEDULE_CASES) {
    const r = parse(c.expression, c.options);
    const at = Date.parse(c.from);
    if (c.rejects !== undefined) {
      if (r.ok) wrong.push(`${c.what}: '${c.expression}' was accepted`);
      else if (!r.error.includes(c.rejects)) wrong.push(`${c.what}: error '${r.error}' lacks '${c.rejects}'`);
      continue;
    }
    if (!r.ok) {
      wrong.push(`${c.what}: '${c.expression}' rejected: ${r.error}`);
      continue;
    }
    if (c.next) {
      const got = r.value.nextRuns(c.next.length, at).map((t) => iso(t));
      if (JSON.stringify(got) !== JSON.stringify(c.next))
        wrong.push(`${c.what}: next ${JSON.stringify(got)}, expected ${JSON.stringify(c.next)}`);
      const first = iso(r.value.nextAfter(at));
      if (first !== (c.next[0] ?? null))
        wrong.push(`${c.what}: nextAfter ${first}, expected ${c.next[0] ?? null}`);
    }
    if (c.latest !== undefined) {
      const got = iso(r.value.latestAtOrBefore(at));
      if (got !== c.latest) wrong.push(`${c.what}: latest ${got}, expected ${c.latest}`);
    }
  }
  return wrong;
}
