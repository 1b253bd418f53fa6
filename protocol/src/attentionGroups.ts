/**
 * The overview's "Needs attention", grouped by cause (issue 44): one row per silent relay, per site a
 * relay's token was refused for, per overdue site, and per group of cells with the same status and
 * reason, each with the filter of the matrix it links to. At fleet scale (1,005 sites, 200,000 cells) a
 * failure shared by a thousand sites is one row, not a thousand. Pure, linear in its input, no I/O: the
 * hub may serve it and the browser may compute it alike.
 */

import { z } from 'zod';
import { type AttentionCustody, type CustodyGroup, groupCustody } from './attentionCustody.js';
import { type AttentionFilter, AttentionFilterSchema } from './attentionFilter.js';
import { forHow, plural } from './attentionText.js';

/** A relay the hub has not heard from (its `silent` problem), with the sites whose contact came through it. */
export interface AttentionRelay {
  name: string;
  /** When it last reported (epoch ms), or null when it never did. */
  silentSince: number | null;
  sitesBehind: readonly string[];
}

/** A site a relay forwarded for although its token does not act for it (`sites-refused`). */
export interface AttentionRefused {
  relay: string;
  site: string;
}

/** A site judged by its contact plan that missed a window (`overdue`) or too many (`unreachable`). */
export interface AttentionOverdue {
  site: string;
  state: 'overdue' | 'unreachable';
  missedWindows: number;
}

/** A cell that needs a look: its status (`failed`, `drift`, `changes`, `locked`, `stale`, …) and reason. */
export interface AttentionCell {
  site: string;
  status: string;
  /** `exit-1`, `lock-timeout`, a drift signature; null when the status says it all. */
  reason: string | null;
  /** How many cells of the site this entry stands for (a count from the hub's read model); default 1. */
  n?: number;
}

export interface AttentionInput {
  relays: readonly AttentionRelay[];
  refused: readonly AttentionRefused[];
  overdue: readonly AttentionOverdue[];
  cells: readonly AttentionCell[];
  /** Upstreams agents found sitting on their results (`attentionCustody.ts`); absent: none. */
  custody?: readonly AttentionCustody[];
}

export type { AttentionFilter } from './attentionFilter.js';

export type AttentionGroup =
  | {
      kind: 'silent-relay';
      relay: string;
      since: number | null;
      sites: number;
      text: string;
      filter: AttentionFilter;
    }
  | { kind: 'refused-site'; relay: string; site: string; text: string; filter: AttentionFilter }
  | {
      kind: 'overdue-site';
      site: string;
      state: 'overdue' | 'unreachable';
      missedWindows: number;
      text: string;
      filter: AttentionFilter;
    }
  | {
      kind: 'cells';
      status: string;
      reason: string | null;
      cells: number;
      sites: number;
      text: string;
      filter: AttentionFilter;
    }
  | CustodyGroup;

export interface AttentionGroups {
  /**
   * At most `limit` rows, causes first (relays, refusals, upstreams sitting on custody, overdue sites),
   * then cell groups, largest first.
   */
  rows: AttentionGroup[];
  /** Rows beyond `limit`, counted. */
  more: number;
  /** Headline counts, relay problems included. */
  counts: {
    silentRelays: number;
    refusedSites: number;
    /**
     * Upstreams sitting on custody past their deadline (docs/decisions/575-custody-deadline-per-path.md);
     * always set by `groupAttention`, absent from older hubs.
     */
    custodyUpstreams?: number;
    overdueSites: number;
    cells: number;
  };
}

/**
 * Groups what needs attention by cause. A site behind a silent relay is counted in that relay's row and
 * not listed again as overdue (its silence has one cause); its cells still count in their groups (they
 * are facts about the site, as last heard). `limit` bounds the rows (default 30).
 */
export function groupAttention(input: AttentionInput, now: number, limit = 30): AttentionGroups {
  const rows: AttentionGroup[] = [];
  const behindSilent = new Set<string>();
  const relays = [...input.relays].sort(
    (a, b) => b.sitesBehind.length - a.sitesBehind.length || (a.name < b.name ? -1 : 1),
  );
  for (const r of relays) {
    for (const s of r.sitesBehind) behindSilent.add(s);
    const sites = new Set(r.sitesBehind).size;
    const silent = r.silentSince === null ? 'never reported' : `silent for ${forHow(now - r.silentSince)}`;
    rows.push({
      kind: 'silent-relay',
      relay: r.name,
      since: r.silentSince,
      sites,
      text: `${r.name} ${silent}: ${plural(sites, 'site')} behind it`,
      filter: { view: 'links', relay: r.name },
    });
  }
  const refusedSeen = new Set<string>();
  for (const f of input.refused) {
    const key = `${f.relay}\u0000${f.site}`;
    if (refusedSeen.has(key)) continue;
    refusedSeen.add(key);
    rows.push({
      kind: 'refused-site',
      relay: f.relay,
      site: f.site,
      text: `${f.site} refused at ${f.relay}: its token does not act for the site`,
      filter: { view: 'matrix', site: f.site },
    });
  }
  const custody = groupCustody(input.custody ?? [], now);
  rows.push(...custody);
  const overdue = input.overdue
    .filter((o) => !behindSilent.has(o.site))
    .sort((a, b) => b.missedWindows - a.missedWindows || (a.site < b.site ? -1 : 1));
  for (const o of overdue)
    rows.push({
      kind: 'overdue-site',
      site: o.site,
      state: o.state,
      missedWindows: o.missedWindows,
      text: `${o.site} ${o.state}: ${plural(o.missedWindows, 'window')} passed without contact`,
      filter: { view: 'matrix', site: o.site },
    });
  const groups = new Map<
    string,
    { status: string; reason: string | null; cells: number; sites: Set<string> }
  >();
  for (const c of input.cells) {
    const k = c.n ?? 1;
    if (k <= 0) continue;
    const key = `${c.status}\u0000${c.reason ?? ''}`;
    let g = groups.get(key);
    if (!g) {
      g = { status: c.status, reason: c.reason, cells: 0, sites: new Set() };
      groups.set(key, g);
    }
    g.cells += k;
    g.sites.add(c.site);
  }
  const cellRows = [...groups.values()].sort(
    (a, b) => b.cells - a.cells || (a.status < b.status ? -1 : a.status > b.status ? 1 : 0),
  );
  for (const g of cellRows)
    rows.push({
      kind: 'cells',
      status: g.status,
      reason: g.reason,
      cells: g.cells,
      sites: g.sites.size,
      text: `${plural(g.cells, 'cell')} ${g.status}${g.reason ? `: ${g.reason}` : ''} at ${plural(g.sites.size, 'site')}`,
      filter: { view: 'matrix', status: g.status, reason: g.reason },
    });
  return {
    rows: rows.slice(0, limit),
    more: Math.max(0, rows.length - limit),
    counts: {
      silentRelays: relays.length,
      refusedSites: refusedSeen.size,
      custodyUpstreams: custody.length,
      overdueSites: overdue.length,
      cells: cellRows.reduce((t, g) => t + g.cells, 0),
    },
  };
}

const nat = z.number().int().nonnegative();

/** `AttentionGroups` on the wire (`GET /api/fleet`'s `attentionGroups`). */
export const AttentionGroupsSchema = z.object({
  rows: z.array(
    z.discriminatedUnion('kind', [
      z.object({
        kind: z.literal('silent-relay'),
        relay: z.string(),
        since: z.number().nullable(),
        sites: nat,
        text: z.string(),
        filter: AttentionFilterSchema,
      }),
      z.object({
        kind: z.literal('refused-site'),
        relay: z.string(),
        site: z.string(),
        text: z.string(),
        filter: AttentionFilterSchema,
      }),
      z.object({
        kind: z.literal('custody-overdue'),
        upstream: z.string(),
        relay: z.string().nullable(),
        results: nat,
        oldestAt: z.number(),
        sites: nat,
        agents: nat,
        siteNames: z.array(z.string()),
        text: z.string(),
        filter: AttentionFilterSchema,
      }),
      z.object({
        kind: z.literal('overdue-site'),
        site: z.string(),
        state: z.enum(['overdue', 'unreachable']),
        missedWindows: nat,
        text: z.string(),
        filter: AttentionFilterSchema,
      }),
      z.object({
        kind: z.literal('cells'),
        status: z.string(),
        reason: z.string().nullable(),
        cells: nat,
        sites: nat,
        text: z.string(),
        filter: AttentionFilterSchema,
      }),
    ]),
  ),
  more: nat,
  counts: z.object({
    silentRelays: nat,
    refusedSites: nat,
    /** Absent from older hubs. */
    custodyUpstreams: nat.optional(),
    overdueSites: nat,
    cells: nat,
  }),
});
