import { globMatch } from '@driftline/protocol';
import type { EpisodeRow } from './episodes.js';

/** A waiver as the drift store keeps it. Times are hub milliseconds. */
export interface WaiverRow {
  id: string;
  pattern: string;
  attributes: string[] | null;
  sites: string[];
  environments: string[];
  components: string[];
  expiresAt: number;
  reason: string;
  author: string;
  createdAt: number;
  removedAt: number | null;
  removedBy: string | null;
}

const anyOf = (patterns: readonly string[], v: string) =>
  patterns.length === 0 || patterns.some((p) => globMatch(p, v));

export function isActive(w: WaiverRow, now: number): boolean {
  return w.removedAt === null && w.createdAt <= now && now < w.expiresAt;
}

/** Whether an active waiver covers an open drift or check episode (failures are never waived). */
export function covers(w: WaiverRow, e: EpisodeRow, now: number): boolean {
  if (!isActive(w, now) || e.state !== 'open' || e.kind === 'failure') return false;
  if (!anyOf(w.sites, e.site) || !anyOf(w.environments, e.environment) || !anyOf(w.components, e.component))
    return false;
  if (!globMatch(w.pattern, e.address) && !globMatch(w.pattern, e.signature)) return false;
  if (w.attributes && e.attributes.some((a) => !w.attributes?.includes(a))) return false;
  return true;
}

/** The first active waiver that covers the episode, or null. */
export function waiverOf(waivers: readonly WaiverRow[], e: EpisodeRow, now: number): WaiverRow | null {
  for (const w of waivers) if (covers(w, e, now)) return w;
  return null;
}
