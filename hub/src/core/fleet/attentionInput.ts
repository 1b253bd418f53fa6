import {
  ATTENTION_KINDS,
  type AttentionCell,
  type AttentionInput,
  type AttentionKind,
  type FleetSite,
  type RelayInfo,
} from '@driftline/protocol';
import type { CellCount, CellRow } from '../../ports/HubStore.js';
import { kindWithStale } from './cellColumns.js';

/**
 * A kind with at most this many cells is read cell by cell (its index, oldest first) and grouped by
 * status and reason exactly; a kind with more is grouped from the read model's counts per site, by
 * status alone (the counts keep no reason). Bounds the overview's read whatever the fleet's size.
 */
export const EXACT_KIND_CAP = 2_000;

/** The status a group of cells of `kind` is named by: a failure's own status, else the kind. */
function groupStatus(kind: AttentionKind, status: string): string {
  return kind === 'failed' || kind === 'stuck-lock' ? status : kind;
}

/** What the store gives the grouping: one kind's cells, longest-standing first, bounded. */
export type KindCells = (kind: AttentionKind, limit: number) => Promise<CellRow[]>;

/**
 * The input of `groupAttention` (protocol) for `/api/fleet`, from the read model and the site and relay
 * rows, never every cell (docs/decisions/460-grouped-attention-from-the-read-model.md):
 * - silent relays (their `silent` problem) with the sites whose last bundle came through them;
 * - sites a relay forwarded for although its token does not (`sitesRefused` of its last status);
 * - sites judged overdue or unreachable;
 * - cells of each attention kind, exact (`EXACT_KIND_CAP`) or counted per site. Stale cells of a silent
 *   site are its one row, not cells.
 */
export async function attentionInput(
  sites: readonly FleetSite[],
  relays: readonly RelayInfo[],
  siteEnvCounts: readonly CellCount[],
  kindTotals: Readonly<Record<string, number>>,
  silent: ReadonlySet<string>,
  kindCells: KindCells,
): Promise<AttentionInput> {
  const behind = new Map<string, string[]>();
  for (const s of sites) if (s.upstream) behind.set(s.upstream, [...(behind.get(s.upstream) ?? []), s.site]);
  const live = relays.filter((r) => !r.revokedAt);
  const out: AttentionInput = {
    relays: live
      .filter((r) => r.problems.some((p) => p.code === 'silent'))
      .map((r) => ({
        name: r.name,
        silentSince: r.reportedAt ? Date.parse(r.reportedAt) : null,
        sitesBehind: behind.get(r.name) ?? [],
      })),
    refused: live.flatMap((r) =>
      r.problems.some((p) => p.code === 'sites-refused')
        ? (r.status?.sitesRefused ?? []).map((site) => ({ relay: r.name, site }))
        : [],
    ),
    overdue: sites.flatMap((s) => {
      const judged = s.contact?.judged ? s.contact : null;
      const state = s.unreachable ? 'unreachable' : judged?.state === 'overdue' ? 'overdue' : null;
      return state ? [{ site: s.site, state, missedWindows: judged?.missedWindows ?? 0 }] : [];
    }),
    cells: [],
  };
  const cells: AttentionCell[] = [];
  const counted = new Set<string>();
  for (const kind of ATTENTION_KINDS) {
    const total = kindTotals[kind] ?? 0;
    if (total === 0) continue;
    if (total > EXACT_KIND_CAP) {
      counted.add(kind);
      continue;
    }
    for (const c of await kindCells(kind, EXACT_KIND_CAP)) {
      if (kind === 'stale' && silent.has(c.site)) continue;
      const reason =
        kind === 'failed' || kind === 'stuck-lock' || kind === 'blocked' ? (c.reason ?? null) : null;
      cells.push({ site: c.site, status: groupStatus(kind, c.status), reason });
    }
  }
  if (counted.size > 0)
    for (const r of siteEnvCounts) {
      const kind = kindWithStale(r.kind, r.stale) as AttentionKind;
      if (!counted.has(kind)) continue;
      const site = r.key.slice(0, r.key.indexOf('/'));
      if (kind === 'stale' && silent.has(site)) continue;
      cells.push({
        site,
        status: groupStatus(kind, r.status),
        reason: kind === 'stuck-lock' ? 'stuck-lock' : null,
        n: r.n,
      });
    }
  out.cells = cells;
  return out;
}

/**
 * One read per kind for one `/api/fleet` answer: the attention list and the grouping both ask for a
 * kind's cells (its first `limit`, longest-standing first), which were read twice. The first ask reads
 * at least `floor(kind)` cells, so that a later ask for no more is a prefix of it; 0 where no later ask
 * will come (a kind too large to group exactly is grouped from counts).
 */
export function onceEachKind(read: KindCells, floor: (kind: AttentionKind) => number): KindCells {
  const reads = new Map<string, { limit: number; rows: Promise<CellRow[]> }>();
  return async (kind, limit) => {
    let r = reads.get(kind);
    if (!r || r.limit < limit) {
      const n = Math.max(limit, floor(kind));
      r = { limit: n, rows: read(kind, n) };
      reads.set(kind, r);
    }
    return (await r.rows).slice(0, limit);
  };
}
