import type { RelayInfo, SiteContact } from '@driftline/protocol';

/**
 * What the overview shows that time alone moves, by name: each site's contact state (with the windows it
 * missed), each relay's problems by code. Compared sweep to sweep, it says what a dashboard must re-read
 * (docs/decisions/585-live-is-live.md). Texts that age by the minute ("silent for 7 min") are left out.
 */
export interface Judgement {
  sites: Map<string, string>;
  relays: Map<string, string>;
}

/** The judgement of the sites' contact plans and the relays' problems at one instant. Pure. */
export function judgementOf(
  sites: readonly { site: string; contact: SiteContact }[],
  relays: readonly RelayInfo[],
): Judgement {
  const s = new Map<string, string>();
  for (const x of sites)
    s.set(x.site, x.contact.judged ? `${x.contact.state} ${x.contact.missedWindows}` : 'unjudged');
  const r = new Map<string, string>();
  for (const x of relays)
    r.set(x.name, x.revokedAt ? 'revoked' : [...new Set(x.problems.map((p) => p.code))].sort().join(','));
  return { sites: s, relays: r };
}

/** The sites and relays whose judgement moved from `before` to `after` (one that came or went moved), sorted. */
export function judgementMoves(before: Judgement, after: Judgement): { sites: string[]; relays: string[] } {
  const moved = (a: Map<string, string>, b: Map<string, string>) =>
    [...new Set([...a.keys(), ...b.keys()])].filter((k) => a.get(k) !== b.get(k)).sort();
  return { sites: moved(before.sites, after.sites), relays: moved(before.relays, after.relays) };
}
