import type { EpisodeRow, Observation } from './episodes.js';

/** A notification of an episode: the event, what it is about, and the key that makes it once per episode. */
export interface Notice {
  event: 'drift.opened' | 'drift.resolved' | 'check.failed' | 'site.overdue' | 'relay.silent';
  subject: string;
  key: string;
  body: Record<string, unknown>;
}

const body = (e: EpisodeRow) => ({
  site: e.site,
  environment: e.environment,
  component: e.component,
  address: e.address,
  type: e.type,
  attributes: e.attributes,
  signature: e.signature,
  firstSeen: new Date(e.firstSeen).toISOString(),
  runId: e.lastRunId,
  episode: e.id,
});

/**
 * What an observation notifies: `drift.opened` when a drift episode opens (not when a waiver covers it),
 * `drift.resolved` when one ends, `check.failed` when a failing-check episode opens. Keyed by the
 * episode, so three identical re-plans notify once.
 */
export function episodeNotices(o: Observation, waived: (e: EpisodeRow) => boolean): Notice[] {
  const out: Notice[] = [];
  const subject = (e: EpisodeRow) => `${e.site}/${e.environment}/${e.component} ${e.address}`.trim();
  for (const e of o.opened) {
    if (e.kind === 'drift' && !waived(e))
      out.push({ event: 'drift.opened', subject: subject(e), key: e.id, body: body(e) });
    if (e.kind === 'check')
      out.push({ event: 'check.failed', subject: subject(e), key: e.id, body: body(e) });
  }
  for (const e of o.resolved)
    if (e.kind === 'drift')
      out.push({
        event: 'drift.resolved',
        subject: subject(e),
        key: e.id,
        body: { ...body(e), resolvedAt: new Date(e.resolvedAt ?? 0).toISOString() },
      });
  return out;
}
