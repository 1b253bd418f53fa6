import { type FleetSite, linkState, nextWindowOf, parseWindows, type SiteDetail } from '@driftline/protocol';
import { contactNow, nextInText } from './contact.js';
import { formatAgo } from './time.js';

/** A site's link facts from its detail (the site view), in the shape the fleet summary gives them. */
export function linkFromDetail(s: SiteDetail): FleetSite {
  const live = s.agents.filter((a) => a.revokedAt === null);
  const depths = live.map((a) => a.queueDepth).filter((x): x is number => x !== null);
  const unsent = live
    .map((a) => a.oldestUnsentAt)
    .filter((x): x is string => x !== null)
    .sort();
  const withData = s.matrix.filter((c) => c.runId).length;
  const stale = s.matrix.filter((c) => c.stale).length;
  return {
    site: s.site,
    cells: s.cells,
    statusCounts: s.statusCounts,
    stale,
    unreachable: s.unreachable,
    lastContactAt: s.lastContactAt,
    expectedContactIntervalS: s.expectedContactIntervalS,
    environments: [...new Set(s.matrix.map((c) => c.environment))].sort(),
    agents: live.length,
    agentsHeardFrom: live.filter((a) => a.lastContactAt !== null).length,
    queueDepth: depths.length ? depths.reduce((a, b) => a + b, 0) : null,
    oldestUnsentAt: unsent[0] ?? null,
    upstream: s.upstream,
    contactWindows: s.contactWindows,
    link: linkState(s, withData),
    ...(s.contact ? { contact: s.contact } : {}),
  };
}

/** Why a site shows what it shows, in words: `enrolled, never heard from`, `link down since 3 h ago`. */
export function linkSentence(
  s: Pick<FleetSite, 'link' | 'lastContactAt'> & { contact?: FleetSite['contact'] },
  nowMs: number,
): string {
  switch (s.link) {
    case 'never-heard':
      return 'enrolled, never heard from';
    case 'no-plan-yet':
      return 'heard from, no plan yet';
    case 'link-down':
      return `link down since ${s.lastContactAt ? formatAgo(s.lastContactAt, nowMs) : 'ever'}`;
    case 'ok':
      return 'in contact';
    case 'waiting':
      return `waiting for window · ${nextInText(s.contact?.nextWindowAt, nowMs)}`;
    case 'overdue': {
      const n = s.contact?.missedWindows ?? 1;
      return `overdue: ${n} ${n === 1 ? 'window' : 'windows'} passed without contact`;
    }
  }
}

/**
 * The site's link state at `now`, its contact plan judged again in the browser: a site waiting for its
 * window turns overdue when the window passes, without a new answer from the hub.
 */
export function liveLink(s: FleetSite, nowMs: number): FleetSite {
  const j = contactNow(s, nowMs);
  if (!j || s.link === 'never-heard') return s;
  const link =
    j.state === 'unreachable'
      ? 'link-down'
      : j.state === 'overdue'
        ? 'overdue'
        : s.link === 'no-plan-yet'
          ? 'no-plan-yet'
          : j.state === 'waiting'
            ? 'waiting'
            : 'ok';
  return {
    ...s,
    link,
    unreachable: j.state === 'unreachable',
    ...(s.contact
      ? {
          contact: {
            ...s.contact,
            state: j.state,
            missedWindows: j.missed,
            nextWindowAt: j.next ? new Date(j.next.start).toISOString() : null,
          },
        }
      : {}),
  };
}

/** When the next declared contact window opens (the windows that parse; free text is only shown), else null. */
export function nextWindow(windows: readonly string[], nowMs: number): number | null {
  return nextWindowOf(parseWindows(windows), nowMs)?.start ?? null;
}
