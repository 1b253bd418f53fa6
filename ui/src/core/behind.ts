import { formatDuration } from './time.js';

/**
 * Why a live page is behind the hub (docs/decisions/585-live-is-live.md): its stream dropped and is
 * reconnecting, or the hub's `fleet-judged` heartbeat has not come for twice the time it said.
 */
export type Behind = { reason: 'reconnecting'; since: number } | { reason: 'quiet'; since: number };

/** The one line a page that fell behind shows; it reads itself again meanwhile. */
export function behindText(b: Behind, now: number): string {
  const ago = formatDuration(Math.max(0, now - b.since));
  return b.reason === 'reconnecting'
    ? `Live updates interrupted ${ago} ago: the page reads the hub again once its stream is back.`
    : `No live update from the hub for ${ago}: this page is read again every few minutes until updates come back.`;
}
