import type { CellRow, WebhookRow } from '../ports/HubStore.js';

export type WebhookEvent = 'new-drift' | 'new-failure' | 'cell-stale' | 'site-unreachable';

/**
 * One row per URL per transition. The id names the transition (event, subject and the run or
 * contact time that caused it), so the store's insert-if-absent makes each transition notify once.
 */
export function webhookRow(
  url: string,
  event: WebhookEvent,
  subject: string,
  cause: string | number,
  body: object,
  now: number,
): WebhookRow {
  return {
    id: `${event}|${subject}|${cause}|${url}`,
    url,
    event,
    body: JSON.stringify({ event, subject, at: new Date(now).toISOString(), ...body }),
    attempts: 0,
    nextAt: now,
    state: 'pending',
    lastError: null,
  };
}

/** Webhooks for a cell that moved into drift or failure. */
export function webhookRows(
  urls: readonly string[],
  prev: CellRow | null,
  next: CellRow,
  now: number,
): WebhookRow[] {
  const event: WebhookEvent | null =
    next.status === 'drift' && prev?.status !== 'drift'
      ? 'new-drift'
      : next.status === 'failed' && prev?.status !== 'failed'
        ? 'new-failure'
        : null;
  if (!event) return [];
  const subject = `${next.site}/${next.environment}/${next.component}`;
  const body = {
    site: next.site,
    environment: next.environment,
    component: next.component,
    status: next.status,
    runId: next.runId,
    counts: next.counts,
    reason: next.reason,
  };
  return urls.map((u) => webhookRow(u, event, subject, next.runId, body, now));
}

/** Retry delays after failed attempts (ms); past the last, the row is marked failed. */
export const WEBHOOK_BACKOFF_MS = [1_000, 5_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000];

export function afterAttempt(
  row: WebhookRow,
  result: { ok: true } | { ok: false; error: string },
  now: number,
): WebhookRow {
  const attempts = row.attempts + 1;
  if (result.ok) return { ...row, attempts, state: 'sent', lastError: null };
  const delay = WEBHOOK_BACKOFF_MS[attempts - 1];
  return delay === undefined
    ? { ...row, attempts, state: 'failed', lastError: result.error }
    : { ...row, attempts, nextAt: now + delay, lastError: result.error };
}
