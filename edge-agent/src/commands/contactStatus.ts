import { formatWindowDuration } from '@driftline/protocol';
import { WindowAim } from '../core/sync/windowAim.js';

/** The site's contact plan as `edge-agent status` shows it (docs/decisions/450-contact-the-agent-proves.md). */
export interface ContactStatus {
  /** `sync.contactWindows` as configured (free text included). */
  windows: string[];
  /** The windows the hub declared for the site that the agent holds (docs/decisions/590-windows-declared-once.md). */
  fromHub: string[];
  /** Whether the agent aims at them (at least one line it can read). */
  planned: boolean;
  /** The window open now, ISO times; null between windows. */
  open: { start: string; end: string } | null;
  next: { start: string; end: string } | null;
  /** Longest wait between tries inside the open (or next) window, seconds: min(backoffCapS, window / 4). */
  triesEveryS: number | null;
}

const iso = (w: { start: number; end: number } | null) =>
  w && { start: new Date(w.start).toISOString(), end: new Date(w.end).toISOString() };

/** Where the site stands against its own contact plan at `now`. */
export function contactStatus(
  windows: readonly string[],
  backoffCapS: number,
  now: number,
  fromHub: readonly string[] = [],
): ContactStatus {
  const aim = new WindowAim([...windows, ...fromHub], backoffCapS * 1000);
  const open = aim.openAt(now);
  const next = aim.nextAfter(now);
  const w = open ?? next;
  return {
    windows: [...windows],
    fromHub: [...fromHub],
    planned: aim.planned,
    open: iso(open),
    next: iso(next),
    triesEveryS: w ? aim.tryEveryMs(w) / 1000 : null,
  };
}

const inText = (ms: number) =>
  ms < 60_000 ? `${Math.round(ms / 1000)} s` : `${Math.round(ms / 60_000)} min`;

/** One line for the text status. */
export function renderContact(c: ContactStatus, now: number): string {
  if (c.windows.length === 0 && c.fromHub.length === 0)
    return "contact plan   none declared (sync.contactWindows, or the hub's contactPlans.sites): the agent syncs every sync.intervalS";
  const all = [...c.windows, ...c.fromHub];
  if (!c.planned) return `contact plan   ${all.join('; ')} (free text: shown, not aimed at)`;
  const len = (w: { start: string; end: string }) =>
    formatWindowDuration(Date.parse(w.end) - Date.parse(w.start));
  const open = c.open ? `window open until ${c.open.end}; ` : '';
  const next = c.next
    ? `next window ${c.next.start} for ${len(c.next)} (in ${inText(Date.parse(c.next.start) - now)})`
    : 'no next window within 40 days';
  return `contact plan   ${open}${next}; tries at least every ${c.triesEveryS ?? '-'} s inside a window; presence sent in a window with nothing else to say${declared(c)}`;
}

const declared = (c: ContactStatus): string =>
  [
    c.windows.length > 0 ? `\n               declared: ${c.windows.join('; ')}` : '',
    c.fromHub.length > 0 ? `\n               declared at the hub: ${c.fromHub.join('; ')}` : '',
  ].join('');
