import type { PlanRequest, PublicationListItem } from '@driftline/protocol';
import { countOf } from './plural.js';

/**
 * Plan requests whose agent has not said they arrived (docs/decisions/300): the hub's `unconfirmed`, or
 * judged in the browser once `confirmBy` passes while the request is still `pending` (as contact windows
 * are judged on screen), so the Links view turns without a new answer from the hub.
 */
export function isUnconfirmed(r: PlanRequest, now: number): boolean {
  if (r.state !== 'pending') return false;
  return r.unconfirmed === true || (r.confirmBy !== undefined && now >= Date.parse(r.confirmBy));
}

/** A site's unconfirmed requests, oldest first; null while the requests are not known. */
export function unconfirmedAt(
  requests: readonly PlanRequest[] | null,
  site: string,
  now: number,
): PlanRequest[] | null {
  if (!requests) return null;
  return requests
    .filter((r) => r.site === site && isUnconfirmed(r, now))
    .sort((a, b) => (a.requestedAt < b.requestedAt ? -1 : 1));
}

/** Publications whose delivery to `site` the hub marks unconfirmed (its agent has not reported them). */
export function unconfirmedPublicationsAt(
  publications: readonly PublicationListItem[] | null,
  site: string,
): PublicationListItem[] {
  return (publications ?? []).filter((p) =>
    (p.deliveries ?? []).some((d) => d.site === site && d.unconfirmed === true),
  );
}

/**
 * `1 plan request unconfirmed, sent again`, `2 plan requests and 1 publication unconfirmed, sent again`,
 * or null when there is none.
 */
export function unconfirmedText(
  list: readonly PlanRequest[],
  publications: readonly PublicationListItem[] = [],
): string | null {
  const parts = [
    ...(list.length > 0 ? [countOf(list.length, 'plan request')] : []),
    ...(publications.length > 0 ? [countOf(publications.length, 'publication')] : []),
  ];
  return parts.length === 0 ? null : `${parts.join(' and ')} unconfirmed, sent again`;
}

/** What each one is: `prod/network@pr/7 requested 2025-06-01T11:00:00.000Z`, `publication cfg`, one a line. */
export function unconfirmedTitle(
  list: readonly PlanRequest[],
  publications: readonly PublicationListItem[] = [],
): string {
  return [
    ...list.map(
      (r) => `${r.environment}/${r.component}${r.ref ? `@${r.ref}` : ''} requested ${r.requestedAt}`,
    ),
    ...publications.map((p) => `publication ${p.name} (${p.fileKind}) published ${p.publishedAt}`),
  ].join('\n');
}
