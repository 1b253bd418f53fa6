import { describe, expect, it } from 'vitest';
import {
  openWindowOf,
  parseWindow,
  parseWindows,
  parseZonedSchedule,
  splitZone,
  windowAfter,
  zonedIsoMs,
} from '../src/index.js';

const iso = (t: number | null | undefined) => (t == null ? null : new Date(t).toISOString());

/** docs/decisions/590-windows-declared-once.md: one optional `tz <IANA zone>` for windows and schedules. */
describe('a time zone at the end of a window or a schedule', () => {
  it('reads a cron window in the zone, through its DST change', () => {
    const r = parseWindow('0 2 * * * for 30m tz Europe/Berlin');
    if (!r.ok) throw new Error(r.error);
    // winter: 02:00 in Berlin is 01:00 UTC; summer: 00:00 UTC
    expect(iso(windowAfter(r.value, Date.parse('2026-12-01T12:00:00Z'))?.start)).toBe(
      '2026-12-02T01:00:00.000Z',
    );
    expect(iso(windowAfter(r.value, Date.parse('2026-07-01T12:00:00Z'))?.start)).toBe(
      '2026-07-02T00:00:00.000Z',
    );
    // the same line without a zone is UTC, as before
    const utc = parseWindow('0 2 * * * for 30m');
    if (!utc.ok) throw new Error(utc.error);
    expect(iso(windowAfter(utc.value, Date.parse('2026-12-01T12:00:00Z'))?.start)).toBe(
      '2026-12-02T02:00:00.000Z',
    );
  });

  it('reads an ISO time without its offset in the zone, and refuses one with both', () => {
    const once = parseWindow('2026-11-27T14:00 for 8m tz Europe/Berlin');
    if (!once.ok) throw new Error(once.error);
    expect(once.value).toMatchObject({ kind: 'once', atMs: Date.parse('2026-11-27T13:00:00Z') });
    const every = parseWindow('every 4h for 10m from 2026-07-01T00:00 tz America/Santiago');
    if (!every.ok) throw new Error(every.error);
    expect(every.value).toMatchObject({ kind: 'every', fromMs: Date.parse('2026-07-01T04:00:00Z') });
    const both = parseWindow('2026-11-27T14:00:00Z for 8m tz Europe/Berlin');
    expect(both).toMatchObject({ ok: false, error: expect.stringMatching(/without its offset/) });
    const bare = parseWindow('2026-11-27T14:00 for 8m');
    expect(bare.ok).toBe(false);
  });

  it('refuses a zone it does not know, naming it and the form to write', () => {
    for (const text of ['0 2 * * * for 30m tz Mars/Olympus', '0 2 * * * for 30m tz Europe/Berlin;rm']) {
      const r = parseWindow(text);
      expect(r).toMatchObject({ ok: false, error: expect.stringMatching(/is not a time zone .*IANA name/) });
    }
    expect(splitZone('0 2 * * * tz UTC')).toEqual({ ok: true, body: '0 2 * * *', zone: 'UTC' });
    expect(splitZone('0 2 * * *')).toEqual({ ok: true, body: '0 2 * * *', zone: null });
  });

  it('a window and a schedule written with the same zone mean the same hour', () => {
    const sched = parseZonedSchedule('0 2 * * * tz Europe/Berlin');
    if (!sched.ok) throw new Error(sched.error);
    const specs = parseWindows(['0 2 * * * for 30m tz Europe/Berlin']);
    const at = sched.value.nextAfter(Date.parse('2026-03-28T12:00:00Z'));
    // the night of the spring change and the night after: the plan fires inside the window both times
    expect(at).not.toBeNull();
    expect(openWindowOf(specs, (at as number) + 1000)).not.toBeNull();
    const next = sched.value.nextAfter(at as number);
    expect(openWindowOf(specs, (next as number) + 1000)).not.toBeNull();
    expect(parseZonedSchedule('0 2 * * * tz Nowhere/Land')).toMatchObject({ ok: false });
    expect(parseZonedSchedule('*/10 * * * * * tz Asia/Tokyo', { seconds: true }).ok).toBe(true);
  });

  it('reads a time the spring change skips as the hour after, and a repeated autumn time as its first', () => {
    // Berlin: 2026-03-29 02:00 CET becomes 03:00 CEST; 2026-10-25 03:00 CEST becomes 02:00 CET
    expect(iso(zonedIsoMs('2026-03-29T02:30', 'Europe/Berlin'))).toBe('2026-03-29T01:30:00.000Z');
    expect(iso(zonedIsoMs('2026-10-25T02:30', 'Europe/Berlin'))).toBe('2026-10-25T00:30:00.000Z');
    expect(iso(zonedIsoMs('2026-06-01T12:00:30.250', 'UTC'))).toBe('2026-06-01T12:00:30.250Z');
    expect(zonedIsoMs('2026-06-01 12:00', 'UTC')).toBeNull();
  });
});
