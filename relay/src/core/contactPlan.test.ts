import { describe, expect, it } from 'vitest';
import { budgetLeft, type ContactPlan, contactState, windowsOf } from './contactPlan.js';

const at = (iso: string) => Date.parse(iso);
// a 10-minute pass at the top of every second hour
const plan: ContactPlan = { windows: windowsOf(['0 */2 * * * for 10m']) };

describe('contactState', () => {
  it('is open inside a window, names it and says when it closes', () => {
    const s = contactState(plan, at('2025-01-01T02:05:30Z'));
    expect(s).toEqual({
      open: true,
      windowKey: String(at('2025-01-01T02:00:00Z')),
      dayKey: '2025-01-01',
      closesAt: at('2025-01-01T02:10:00Z'),
    });
  });
  it('is closed outside and says when the next window opens', () => {
    expect(contactState(plan, at('2025-01-01T02:10:00Z'))).toEqual({
      open: false,
      opensAt: at('2025-01-01T04:00:00Z'),
    });
    expect(contactState(plan, at('2025-01-01T03:59:59Z'))).toEqual({
      open: false,
      opensAt: at('2025-01-01T04:00:00Z'),
    });
  });
  it('is always open without windows', () => {
    expect(contactState({ windows: [] }, 0).open).toBe(true);
  });
  it('opens on the 1st of the month or a Monday, as cron does, and takes 7 for Sunday', () => {
    // 2026-12-02 is a Wednesday: the next window is Monday the 7th, not 1 February (both days at once).
    const monthly = { windows: windowsOf(['0 6 1 * 1 for 30m']) };
    expect(contactState(monthly, at('2026-12-02T00:00:00Z'), 30 * 86_400_000)).toEqual({
      open: false,
      opensAt: at('2026-12-07T06:00:00Z'),
    });
    const sundays = { windows: windowsOf(['0 6 * * 7 for 30m']) };
    expect(contactState(sundays, at('2026-12-06T06:29:00Z'))).toMatchObject({ open: true });
  });
  it('says nothing opens when the next window is beyond the lookahead', () => {
    const yearly = { windows: windowsOf(['0 0 1 1 * for 10m']) };
    expect(contactState(yearly, at('2026-06-01T00:00:00Z'))).toEqual({ open: false, opensAt: null });
  });
  it('refuses a malformed window with a reason', () => {
    expect(() => windowsOf(['61 * * * * for 5m'])).toThrow(/minute/);
  });
});

describe('budgetLeft', () => {
  it('takes the tighter of the window and day budgets', () => {
    expect(budgetLeft({ windows: [], bytesPerWindow: 100, bytesPerDay: 1000 }, 30, 950)).toBe(50);
    expect(budgetLeft({ windows: [], bytesPerWindow: 100 }, 130, 0)).toBe(0);
    expect(budgetLeft({ windows: [] }, 1e9, 1e9)).toBe(Number.POSITIVE_INFINITY);
  });
});
