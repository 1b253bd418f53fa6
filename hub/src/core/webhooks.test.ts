import { describe, expect, it } from 'vitest';
import { afterAttempt, WEBHOOK_BACKOFF_MS, webhookRow } from './webhooks.js';

describe('webhook retries', () => {
  it('backs off after each failure and gives up after the last delay', () => {
    let row = webhookRow('http://127.0.0.1:9/', 'new-drift', 's/e/c', 'R1', {}, 0);
    for (const delay of WEBHOOK_BACKOFF_MS) {
      row = afterAttempt(row, { ok: false, error: 'HTTP 500' }, 1000);
      expect(row).toMatchObject({ state: 'pending', nextAt: 1000 + delay, lastError: 'HTTP 500' });
    }
    expect(afterAttempt(row, { ok: false, error: 'HTTP 500' }, 1000).state).toBe('failed');
  });

  it('marks a delivered webhook sent', () => {
    const row = webhookRow('http://127.0.0.1:9/', 'cell-stale', 's/e/c', 'R1', {}, 0);
    expect(afterAttempt(row, { ok: true }, 5)).toMatchObject({ state: 'sent', attempts: 1 });
  });
});
