import { MATRIX_PAGE_MAX, type MatrixCell, type MatrixQuery, type SiteContact } from '@driftline/protocol';
import type { AgentRow, ReadStore } from '../../ports/HubStore.js';
import { type ContactPlans, cellWithContact } from '../contact/ContactPlans.js';
import { withDiagnostics } from '../diagnostic.js';
import type { RefQueries } from '../RefQueries.js';
import { isUnreachable, toMatrixCell, type ViewContext } from '../views.js';
import { decodeCellCursor, encodeCellCursor } from './MatrixWindow.js';
import { pageWhole } from './pageWhole.js';
import { keyText, refFleet, refRange, sameKey } from './refMatrixRange.js';
import { siteRows } from './siteContext.js';
import { type WaivedCells, waivedKey } from './waivedDrift.js';

export type RefPageStore = Pick<
  ReadStore,
  'listCellsOfRef' | 'listRefCells' | 'listAgentBriefs' | 'getSite' | 'listSites' | 'listAgents' | 'getRun'
>;

/**
 * Pages of a ref's matrix (`/api/matrix?ref=…`; docs/decisions/650-ref-matrix-pages.md): the cells after
 * the cursor read range by range from the ref index until the page is full, never the whole matrix. The
 * answer is the page `Queries.matrix` computed whole gave: its default cells and `@ref` cells of the ref,
 * no-data where agents' patterns allow the ref, judged and filtered alike, in the cursor's key order.
 */
export class RefMatrixPages {
  constructor(
    private readonly store: RefPageStore,
    private readonly refs: RefQueries,
    private readonly defaultContactIntervalS: number | null,
    private readonly contactPlans?: ContactPlans,
  ) {}

  /** Cells whose drift is all waived (decision 421): marked `driftWaived`. Set by the hub. */
  waivedCells?: WaivedCells;

  async page(
    q: Omit<MatrixQuery, 'at' | 'ref'> & { ref: string },
    now: number,
  ): Promise<{ cells: MatrixCell[]; next: string | null }> {
    const limit = Math.min(q.limit ?? MATRIX_PAGE_MAX, MATRIX_PAGE_MAX);
    const ctx: ViewContext = { now, defaultContactIntervalS: this.defaultContactIntervalS };
    const [fleet, waived] = await Promise.all([
      refFleet(this.store, q.ref, q.site),
      this.waivedCells ? this.waivedCells(now) : null,
    ]);
    const judge = new Map<
      string,
      { unreachable: boolean; contact: SiteContact | null; at: number | null; agents: AgentRow[] }
    >();
    const judgeSites = async (names: readonly string[]) => {
      const unjudged = [...new Set(names)].filter((s) => !judge.has(s));
      if (unjudged.length === 0) return;
      const { rows, agents } = await siteRows(this.store, unjudged);
      for (const site of unjudged) {
        const row = rows.get(site) ?? null;
        const of = agents.get(site) ?? [];
        const contact = this.contactPlans
          ? this.contactPlans.of(site, of, row?.lastContactAt ?? null, now)
          : null;
        const unreachable = contact?.judged ? contact.state === 'unreachable' : isUnreachable(row, of, ctx);
        judge.set(site, { unreachable, contact, at: row?.lastContactAt ?? null, agents: of });
      }
    };
    const unreachable = (site: string) => judge.get(site)?.unreachable ?? false;
    const shown = (c: MatrixCell) =>
      (!q.sites || q.sites.includes(c.site)) &&
      (!q.environment || c.environment === q.environment) &&
      (!q.component || c.component === q.component) &&
      (!q.status || c.status === q.status) &&
      (q.stale === undefined || c.stale === q.stale);
    const out: MatrixCell[] = [];
    // Ranges of about a page: enough when the page holds `limit` cells and a key past the next one's.
    const chunk = limit + 1;
    let from = decodeCellCursor(q.cursor);
    for (;;) {
      const range = await refRange(this.store, fleet, q.ref, q.site, from, chunk);
      await judgeSites([...range.rows.map((c) => c.site), ...range.noDataSites]);
      const cells = range.rows.map((c) => {
        const m = toMatrixCell(c, ctx, unreachable(c.site));
        const j = judge.get(c.site);
        return j?.contact ? cellWithContact(m, j.contact, j.at, now) : m;
      });
      for (const site of range.noDataSites)
        for (const c of this.refs.noData(judge.get(site)?.agents ?? [], q.ref, range.have, unreachable))
          if (range.holds(c)) cells.push(c);
      // Stable: of two cells at one key, the default cell comes first, as in the whole matrix.
      const keyed = cells.map((c) => ({ c, k: keyText(c) }));
      keyed.sort((a, b) => (a.k < b.k ? -1 : a.k > b.k ? 1 : 0));
      for (const { c } of keyed) {
        const m = waived?.has(waivedKey(c)) ? { ...c, driftWaived: true } : c;
        if (shown(m)) out.push(m);
      }
      const next = out[limit];
      const last = out.at(-1);
      if (!range.end || (next && last && !sameKey(next, last))) break;
      from = range.end;
    }
    const { cells, last } = pageWhole(out, undefined, limit);
    return { cells: await withDiagnostics(this.store, cells), next: last ? encodeCellCursor(last) : null };
  }
}
