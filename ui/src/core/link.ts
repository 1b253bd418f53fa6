import { type FleetSite, linkState, type SiteDetail } from '@driftline/protocol';
import { nextCronTime } from './cron.js';
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
  };
}

/** Why a site shows what it shows, in words: `enrolled, never heard from`, `link down since 3 h ago`. */
export function linkSentence(s: Pick<FleetSite, 'link' | 'lastContactAt'>, nowMs: number): string {
  switch (s.link) {
    case 'never-heard':
      return 'enrolled, never heard from';
    case 'no-plan-yet':
      return 'heard from, no plan yet';
    case 'link-down':
      return `link down since ${s.lastContactAt ? formatAgo(s.lastContactAt, nowMs) : 'ever'}`;
    case 'ok':
      return 'in contact';
  }
}

/** The next declared contact window: the earliest next time of the cron windows, else null. */
export function nextWindow(windows: readonly string[], nowMs: number): number | null {
  const times = windows.map((w) => nextCronTime(w, nowMs)).filter((t): t is number => t !== null);
  return times.length ? Math.min(...times) : null;
}
