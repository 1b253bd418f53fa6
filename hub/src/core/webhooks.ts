import type { AgentRow, CellRow, WebhookRow } from '../ports/HubStore.js';

export type WebhookEvent =
  | 'new-drift'
  | 'new-failure'
  | 'cell-stale'
  | 'site-unreachable'
  | 'custody-overdue';

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

/**
 * Webhooks for a cell that moved into drift or failure. A `stuck-lock` failure is one episode for as long
 * as the same lock is held: its transition is named by the lock's ID (`lockId`, from the run's summary)
 * rather than the run, so the lock notifies once even where an agent of an earlier release reads it
 * `locked` again between stuck runs (docs/decisions/555-stuck-lock-stays-stuck.md).
 */
export function webhookRows(
  urls: readonly string[],
  prev: CellRow | null,
  next: CellRow,
  now: number,
  lockId?: string,
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
  const cause =
    event === 'new-failure' && next.reason === 'stuck-lock' && lockId ? `lock:${lockId}` : next.runId;
  return urls.map((u) => webhookRow(u, event, subject, cause, body, now));
}

/**
 * Webhooks for upstreams an agent newly reports sitting on its custody (decision 575): one per episode,
 * named by the upstream and the episode's start on the agent's clock (the same in every later report).
 */
export function custodyWebhookRows(
  urls: readonly string[],
  agent: { site: string; agent: string },
  before: AgentRow['custodyOverdue'],
  after: AgentRow['custodyOverdue'],
  now: number,
): WebhookRow[] {
  const known = new Set((before ?? []).map((c) => `${c.upstream}|${c.episode}`));
  return (after ?? [])
    .filter((c) => !known.has(`${c.upstream}|${c.episode}`))
    .flatMap((c) =>
      urls.map((u) =>
        webhookRow(
          u,
          'custody-overdue',
          `${agent.site}/${agent.agent}`,
          `${c.upstream}|${c.episode}`,
          {
            site: agent.site,
            agent: agent.agent,
            upstream: c.upstream,
            results: c.results,
            oldestAt: new Date(c.oldestAt).toISOString(),
            message: `${c.upstream} holds ${c.results} result(s) of ${agent.site}/${agent.agent} past their deadline; the agent sends them by another upstream`,
          },
          now,
        ),
      ),
    );
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
