/**
 * Upstreams sitting on custody in the overview's "Needs attention" (issue 59): an agent reports each
 * upstream that held its results past the path's deadline without the hub's ack (`custodyOverdue`,
 * docs/decisions/575-custody-deadline-per-path.md); the hub groups those reports by upstream, one row
 * each, naming the sites whose results it held. Pure, no I/O.
 */

import type { AttentionFilter } from './attentionFilter.js';
import { forHow, n, plural } from './attentionText.js';

/** One agent's report of one upstream sitting on its results. */
export interface AttentionCustody {
  /** The upstream: the relay's name where the hub knows it, else as the agent names it (its URL). */
  upstream: string;
  /** The relay the upstream is, where the hub knows it; null for an upstream it cannot name. */
  relay: string | null;
  site: string;
  agent: string;
  /** Results it held past their deadline at the agent's last report. */
  results: number;
  /** When the oldest of them was given to it (epoch ms, hub clock). */
  oldestAt: number;
}

/** Sites an upstream row names before "and N more". */
export const CUSTODY_SITES_NAMED = 3;

export interface CustodyGroup {
  kind: 'custody-overdue';
  upstream: string;
  relay: string | null;
  /** Results held past their deadline, summed over the agents that reported it. */
  results: number;
  /** The oldest of them given (epoch ms). */
  oldestAt: number;
  sites: number;
  agents: number;
  /** The first sites by name, at most {@link CUSTODY_SITES_NAMED}. */
  siteNames: string[];
  text: string;
  filter: AttentionFilter;
}

/** `(site ship-1)`, `(sites ship-1, ship-2)`, `(sites a, b, c and 4 more)`. */
function sitesText(names: readonly string[]): string {
  const shown = names.slice(0, CUSTODY_SITES_NAMED);
  const more = names.length - shown.length;
  const list = more > 0 ? `${shown.join(', ')} and ${n(more)} more` : shown.join(', ');
  return `(${names.length === 1 ? 'site' : 'sites'} ${list})`;
}

/**
 * One row per upstream: `relay-2 holds 13 results past their deadline, oldest 14 min (site ship-1)`,
 * most results first; each links to Links (where the same line stands under the table).
 */
export function groupCustody(input: readonly AttentionCustody[], now: number): CustodyGroup[] {
  const by = new Map<
    string,
    { relay: string | null; results: number; oldestAt: number; sites: Set<string>; agents: Set<string> }
  >();
  for (const c of input) {
    if (c.results <= 0) continue;
    let g = by.get(c.upstream);
    if (!g) {
      g = { relay: c.relay, results: 0, oldestAt: c.oldestAt, sites: new Set(), agents: new Set() };
      by.set(c.upstream, g);
    }
    g.results += c.results;
    g.oldestAt = Math.min(g.oldestAt, c.oldestAt);
    g.sites.add(c.site);
    g.agents.add(`${c.site}\u0000${c.agent}`);
  }
  return [...by]
    .sort(([a, x], [b, y]) => y.results - x.results || (a < b ? -1 : a > b ? 1 : 0))
    .map(([upstream, g]) => {
      const names = [...g.sites].sort();
      const held = `${plural(g.results, 'result')} past ${g.results === 1 ? 'its' : 'their'} deadline`;
      return {
        kind: 'custody-overdue' as const,
        upstream,
        relay: g.relay,
        results: g.results,
        oldestAt: g.oldestAt,
        sites: names.length,
        agents: g.agents.size,
        siteNames: names.slice(0, CUSTODY_SITES_NAMED),
        text: `${upstream} holds ${held}, oldest ${forHow(now - g.oldestAt)} ${sitesText(names)}`,
        filter: { view: 'links' as const, relay: upstream },
      };
    });
}
