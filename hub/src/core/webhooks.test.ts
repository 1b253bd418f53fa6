import { describe, expect, it } from 'vitest';
import { afterAttempt, custodyWebhookRows, WEBHOOK_BACKOFF_MS, webhookRow } from './webhooks.js';

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

describe('custody-overdue webhooks (decision 575)', () => {
  const sat = (episode: number, results: number) => ({
    upstream: 'http://relay-2:7000',
    results,
    oldestAt: 1000,
    since: episode + 5,
    resends: 1,
    episode,
  });
  const agent = { site: 'ship-7', agent: 'a1' };
  it('notifies once per episode of an upstream sitting on custody, not at each report of it', () => {
    const first = custodyWebhookRows(['http://hook'], agent, [], [sat(100, 3)], 0);
    expect(first).toHaveLength(1);
    expect(JSON.parse(first[0]?.body ?? '{}')).toMatchObject({
      event: 'custody-overdue',
      subject: 'ship-7/a1',
      upstream: 'http://relay-2:7000',
      results: 3,
    });
    // the same episode reported again (more results, a corrected clock): nothing new
    expect(custodyWebhookRows(['http://hook'], agent, [sat(100, 3)], [sat(100, 9)], 0)).toEqual([]);
    // a later episode of the same upstream notifies again, under another id
    const again = custodyWebhookRows(['http://hook'], agent, [], [sat(900, 1)], 0);
    expect(again[0]?.id).not.toBe(first[0]?.id);
  });
});
