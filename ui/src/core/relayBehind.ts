import type { FleetSite, RelayInfo } from '@driftline/protocol';
import { formatAbsolute } from './time.js';

/** The relay a site's last contact came through, when that relay is silent or revoked: the hub cannot hear the site. */
export interface BehindRelay {
  relay: string;
  /** `silent` (no status for `SILENT_AFTER_MS`) or `revoked`. */
  why: 'silent' | 'revoked';
  /** Since when: its last status (silent), or its revocation. Null: it never reported. */
  since: string | null;
}

/**
 * Whether the site sits behind a relay the hub cannot hear from (its `upstream`, the peer its last contact
 * came through, has the `silent` problem or was revoked). Such a site must never read `in contact`: the
 * hub would not know if it were not (issue 44).
 */
export function behindRelay(
  s: Pick<FleetSite, 'upstream'>,
  relays: readonly RelayInfo[],
): BehindRelay | null {
  if (!s.upstream) return null;
  const r = relays.find((x) => x.name === s.upstream);
  if (!r) return null;
  if (r.revokedAt) return { relay: r.name, why: 'revoked', since: r.revokedAt };
  if (r.problems.some((p) => p.code === 'silent'))
    return { relay: r.name, why: 'silent', since: r.reportedAt };
  return null;
}

/** `behind relay-1, silent since 2026-11-29 12:03:10 UTC` / `behind relay-1, revoked at …`. */
export function behindText(b: BehindRelay): string {
  if (b.why === 'revoked') return `behind ${b.relay}, revoked at ${b.since ? formatAbsolute(b.since) : '?'}`;
  return `behind ${b.relay}, silent since ${b.since ? formatAbsolute(b.since) : 'it started (no report yet)'}`;
}

/**
 * The link sentence of a site behind such a relay: `in contact` and `waiting for window` give way to it
 * (neither is known any more); the others keep theirs and name the relay too.
 */
export function sentenceBehind(sentence: string, link: FleetSite['link'], b: BehindRelay | null): string {
  if (!b) return sentence;
  return link === 'ok' || link === 'waiting' ? behindText(b) : `${sentence} · ${behindText(b)}`;
}
