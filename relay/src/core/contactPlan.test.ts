import { describe, expect, it } from 'vitest';
import { budgetLeft, type ContactPlan, contactState } from './contactPlan.js';
import { parseCron } from './cron.js';

const cron = (e: string) => {
  const r = parseCron(e);
  if (!r.ok) throw new Error(r.error);
  return r.value;
};
const at = (iso: string) => Date.parse(iso);
// a 10-minute pass at the top of every second hour
const plan: ContactPlan = { windows: [{ cron: cron('0 */2 * * *'), durationMinutes: 10 }] };

describe('contactState', () => {
  it('is open inside a window and names it', () => {
    const s = contactState(plan, at('2025-01-01T02:05:30Z'));
    expect(s).toEqual({ open: true, windowKey: String(at('2025-01-01T02:00:00Z')), dayKey: '2025-01-01' });
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
});

describe('parseCron', () => {
  it('refuses a malformed expression with a reason', () => {
    expect(parseCron('* * *')).toEqual({ ok: false, error: "cron '* * *' needs 5 fields, has 3" });
    expect(parseCron('61 * * * *').ok).toBe(false);
    expect(parseCron('x * * * *').ok).toBe(false);
  });
  it('reads lists, ranges and steps', () => {
    const c = cron('5,10-12,*/30 * * * 1-5');
    expect([...(c.fields[0] ?? [])].sort((a, b) => a - b)).toEqual([0, 5, 10, 11, 12, 30]);
    expect([...(c.fields[4] ?? [])]).toEqual([1, 2, 3, 4, 5]);
  });
});

describe('budgetLeft', () => {
  it('takes the tighter of the window and day budgets', () => {
    expect(budgetLeft({ windows: [], bytesPerWindow: 100, bytesPerDay: 1000 }, 30, 950)).toBe(50);
    expect(budgetLeft({ windows: [], bytesPerWindow: 100 }, 130, 0)).toBe(0);
    expect(budgetLeft({ windows: [] }, 1e9, 1e9)).toBe(Number.POSITIVE_INFINITY);
  });
});
