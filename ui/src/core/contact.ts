import {
  type ContactJudgement,
  cellAgainstContact,
  judgeContact,
  type MatrixCell,
  parseWindows,
  type SiteContact,
  type SiteSummary,
} from '@driftline/protocol';
import { formatDuration } from './time.js';

/** What the dashboard knows of a site to judge its silence: its last contact and contact plan. */
export type SiteContactFacts = Pick<SiteSummary, 'lastContactAt'> & { contact?: SiteContact | undefined };

/**
 * Where the site stands against its plan at `now`, judged again in the browser (the same pure judge the hub
 * uses), so `waiting` turns `overdue` when a window passes without a new answer from the hub. Null when no
 * plan judges the site (docs/decisions/260-contact-plans.md).
 */
export function contactNow(
  s: SiteContactFacts | undefined,
  now: number,
): (ContactJudgement & { plan: SiteContact }) | null {
  const plan = s?.contact;
  if (!plan?.judged) return null;
  const j = judgeContact(
    parseWindows(plan.windows),
    s?.lastContactAt ? Date.parse(s.lastContactAt) : null,
    now,
    { graceMs: plan.graceS * 1000, unreachableAfter: plan.unreachableAfter },
  );
  return j.state === 'unplanned' ? null : { ...j, plan };
}

/**
 * A cell as its site's plan reads it at `now`: between windows it is waiting (not stale); it is stale
 * only if it was more than two cadences old when the site was last heard from.
 */
export function cellAgainstPlan(
  cell: MatrixCell,
  site: SiteContactFacts | undefined,
  now: number,
): MatrixCell {
  const j = contactNow(site, now);
  if (!j) return cell;
  const nextWindowAt = j.next ? new Date(j.next.start).toISOString() : null;
  const last = site?.lastContactAt ? Date.parse(site.lastContactAt) : null;
  return cellAgainstContact(cell, { state: j.state, nextWindowAt, graceS: j.plan.graceS }, last, now);
}

/** `next in 3 min`, `opens now`, or `no next window known`. */
export function nextInText(nextWindowAt: string | null | undefined, now: number): string {
  if (!nextWindowAt) return 'no next window known';
  const ms = Date.parse(nextWindowAt) - now;
  return ms < 5000 ? 'opens now' : `next in ${formatDuration(ms)}`;
}

/** A cell's (or site's) contact mark: `waiting for window · next in 3 min`, `overdue · 1 window missed`. */
export function contactText(
  c: { contact?: MatrixCell['contact']; nextWindowAt?: string | null },
  now: number,
  missed?: number,
): string | null {
  switch (c.contact) {
    case 'waiting':
      return `waiting for window · ${nextInText(c.nextWindowAt, now)}`;
    case 'overdue':
      return `overdue · ${missed ? `${missed} ${missed === 1 ? 'window' : 'windows'} missed` : 'a window passed without contact'}`;
    default:
      return null;
  }
}
