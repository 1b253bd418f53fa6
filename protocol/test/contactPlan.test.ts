import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  contactSessions,
  judgeContact,
  lastWindowOf,
  learnContactPlan,
  openWindowOf,
  parseDuration,
  parseWindow,
  parseWindows,
  type WindowSpec,
  windowAfter,
  windowAtOrBefore,
} from '../src/index.js';

const T0 = Date.parse('2026-11-27T00:00:00Z');
const S = 1000;
const MIN = 60 * S;
const spec = (text: string): WindowSpec => {
  const r = parseWindow(text);
  if (!r.ok) throw new Error(r.error);
  return r.value;
};

describe('contact window format', () => {
  it('reads periodic, cron and one-off windows, and says what is wrong with the rest', () => {
    expect(spec('every 4m for 40s from 2026-11-27T00:00:00Z')).toEqual({
      kind: 'every',
      periodMs: 4 * MIN,
      durationMs: 40 * S,
      fromMs: T0,
    });
    expect(spec('0 2 * * * for 30m')).toMatchObject({ kind: 'cron', durationMs: 30 * MIN });
    expect(spec('0 */2 * * *')).toMatchObject({ kind: 'cron', durationMs: MIN });
    expect(parseWindow('*/90 * * * * for 5m')).toEqual({
      ok: false,
      error: expect.stringContaining('step wider than its field'),
    });
    expect(spec('2026-11-27T14:00:00Z for 8m')).toEqual({
      kind: 'once',
      atMs: T0 + 14 * 60 * MIN,
      durationMs: 8 * MIN,
    });
    const bad = parseWindow('every 4m for 5m from 2026-11-27T00:00:00Z');
    expect(bad).toEqual({ ok: false, error: expect.stringContaining('longer than its period') });
    expect(parseWindow('when the satellite is up')).toEqual({
      ok: false,
      error: expect.stringContaining('is not'),
    });
    expect(parseWindows(['nightly, roughly', '0 2 * * * for 30m'])).toHaveLength(1);
    expect(parseDuration('1h30m')).toBe(90 * MIN);
    expect(parseDuration('90')).toBeNull();
    expect(parseDuration('5x')).toBeNull();
  });

  it('finds the next and the last cron window in UTC', () => {
    const nightly = spec('0 2 * * * for 30m');
    expect(windowAfter(nightly, T0)).toEqual({ start: T0 + 2 * 60 * MIN, end: T0 + 2.5 * 60 * MIN });
    expect(windowAtOrBefore(nightly, T0)).toEqual({ start: T0 - 22 * 60 * MIN, end: T0 - 21.5 * 60 * MIN });
  });

  it('has no window start between the last one at or before t and the next one after t', () => {
    const texts = fc.oneof(
      fc
        .record({ p: fc.integer({ min: 10, max: 100_000 }), d: fc.integer({ min: 1, max: 10 }) })
        .map(({ p, d }) => `every ${p}s for ${Math.max(1, Math.floor(p / d))}s from 2026-11-27T00:00:00Z`),
      fc
        .record({
          m: fc.integer({ min: 0, max: 59 }),
          h: fc.integer({ min: 0, max: 23 }),
          step: fc.integer({ min: 1, max: 12 }),
        })
        .map(({ m, h, step }) => `${m} ${h}/${step} * * * for 5m`),
    );
    fc.assert(
      fc.property(texts, fc.integer({ min: -5 * 86_400, max: 30 * 86_400 }), (text, offS) => {
        const s = spec(text);
        const t = T0 + offS * S;
        const next = windowAfter(s, t);
        const last = windowAtOrBefore(s, t);
        expect(next).not.toBeNull();
        if (!next) return;
        expect(next.start).toBeGreaterThan(t);
        if (last) {
          expect(last.start).toBeLessThanOrEqual(t);
          // The window after the last one is the next one: nothing starts in between.
          expect(windowAfter(s, last.start)).toEqual(next);
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('judging silence against the plan', () => {
  const polar = [spec('every 4m for 40s from 2026-11-27T00:00:00Z')];
  const opts = { graceMs: 30 * S, unreachableAfter: 3 };

  it('reads a site heard from in its last window as waiting for the next, then in window', () => {
    const heard = T0 + 20 * S;
    const j = judgeContact(polar, heard, T0 + 3 * MIN, opts);
    expect(j).toMatchObject({
      state: 'waiting',
      missed: 0,
      next: { start: T0 + 4 * MIN },
      last: { start: T0 },
    });
    expect(judgeContact(polar, heard, T0 + 4 * MIN + 10 * S, opts).state).toBe('in-window');
    // The window open and its grace not over: still not overdue.
    expect(judgeContact(polar, heard, T0 + 4 * MIN + 60 * S, opts).state).toBe('waiting');
  });

  it('calls a site overdue once a window passed without contact, unreachable after N', () => {
    const heard = T0 + 20 * S;
    expect(judgeContact(polar, heard, T0 + 4 * MIN + 71 * S, opts)).toMatchObject({
      state: 'overdue',
      missed: 1,
    });
    expect(judgeContact(polar, heard, T0 + 12 * MIN + 71 * S, opts)).toMatchObject({
      state: 'unreachable',
      missed: 3,
    });
    expect(judgeContact([], heard, T0 + 100 * MIN, opts).state).toBe('unplanned');
  });

  it('never calls a site that keeps every window overdue, and counts each missed window once', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 60, max: 3600 }),
        fc.array(fc.boolean(), { minLength: 1, maxLength: 30 }),
        fc.integer({ min: 0, max: 100 }),
        (periodS, kept, frac) => {
          const p = periodS * S;
          const plan = [{ kind: 'every', periodMs: p, durationMs: p / 4, fromMs: T0 } as const];
          const g = { graceMs: p / 8, unreachableAfter: 1000 };
          let last: number | null = T0;
          let missedSince = 0;
          for (let i = 0; i < kept.length; i++) {
            const start = T0 + i * p;
            if (kept[i]) {
              last = start + (frac / 100) * (p / 4);
              missedSince = 0;
            } else if (i > 0) missedSince++;
            // Judged just before the next window opens: every window so far is over with its grace.
            const j = judgeContact(plan, last, start + p - 1, g);
            expect(j.missed).toBe(missedSince);
            expect(j.state).toBe(missedSince === 0 ? 'waiting' : 'overdue');
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('learning a plan from contact history', () => {
  it('splits contacts into sessions at silences', () => {
    expect(contactSessions([0, 5, 10, 100, 104], 30)).toEqual([
      { start: 0, end: 10 },
      { start: 100, end: 104 },
    ]);
  });

  it('finds the period of passes from their contacts, through missed passes and jitter', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2 * 60, max: 86_400 }),
        fc.integer({ min: 2, max: 8 }),
        fc.array(fc.boolean(), { minLength: 8, maxLength: 30 }),
        fc.integer({ min: 1, max: 1_000_000 }),
        (periodS, durDiv, seen, seed) => {
          const p = periodS * S;
          const d = Math.floor(p / durDiv / 2);
          let x = seed;
          const rnd = () => {
            x = (x * 1103515245 + 12345) % 2 ** 31;
            return x / 2 ** 31;
          };
          const contacts: number[] = [];
          // At least 80 % of the passes are seen; each seen pass has contacts from its start to its end,
          // the first up to 1 % of the period late.
          const shown = seen.map((v, i) => v || i % 5 !== 0);
          shown.forEach((v, i) => {
            if (!v) return;
            const start = T0 + i * p + rnd() * 0.01 * p;
            for (let t = start; t <= T0 + i * p + d; t += d / 4) contacts.push(Math.round(t));
          });
          const learned = learnContactPlan(contacts, { silenceMs: p / 4 });
          expect(learned).not.toBeNull();
          if (!learned) return;
          expect(Math.abs(learned.periodMs - p)).toBeLessThanOrEqual(0.02 * p);
          expect(learned.confidence).toBeGreaterThan(0.5);
          // The plan reads back in the declared format and predicts the next pass within 2 % of a period.
          const next = windowAfter(spec(learned.window), T0 + (seen.length - 1) * p + d);
          expect(next).not.toBeNull();
          expect(Math.abs((next?.start ?? 0) - (T0 + seen.length * p))).toBeLessThanOrEqual(0.03 * p);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('learns nothing from a site always in contact or heard from twice', () => {
    const steady = Array.from({ length: 500 }, (_, i) => T0 + i * 10 * S);
    expect(learnContactPlan(steady, { silenceMs: MIN })).toBeNull();
    expect(learnContactPlan([T0, T0 + 4 * MIN], { silenceMs: MIN })).toBeNull();
  });

  it('trusts irregular contact little', () => {
    const starts = [0, 7, 9, 31, 32, 50, 77, 78, 101].map((m) => T0 + m * MIN);
    const learned = learnContactPlan(starts, { silenceMs: 30 * S });
    expect(learned === null || learned.confidence < 0.5).toBe(true);
  });
});

describe('the window open at a time, with overlapping specs', () => {
  it('finds a longer window still open after a later, shorter one ended inside it', () => {
    const specs = parseWindows([
      'every 60m for 30m from 2026-11-27T00:00:00Z',
      'every 60m for 5m from 2026-11-27T00:10:00Z',
    ]);
    const t = Date.parse('2026-11-27T00:20:00Z');
    // The latest window to start (00:10, 5 min) has ended; the one from 00:00 (30 min) is still open.
    expect(lastWindowOf(specs, t)?.start).toBe(Date.parse('2026-11-27T00:10:00Z'));
    expect(openWindowOf(specs, t)?.start).toBe(Date.parse('2026-11-27T00:00:00Z'));
    expect(openWindowOf(specs, Date.parse('2026-11-27T00:40:00Z'))).toBeNull();
  });
});
