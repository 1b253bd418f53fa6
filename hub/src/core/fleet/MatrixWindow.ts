import { MATRIX_PAGE_MAX, type MatrixCell, type MatrixQuery } from '@driftline/protocol';
import type { AgentFacts, CellPageQuery, CellRow, ReadStore } from '../../ports/HubStore.js';
import { type ContactPlans, cellWithContact } from '../contact/ContactPlans.js';
import { withDiagnostics } from '../diagnostic.js';
import { isUnreachable, noDataCells, toMatrixCell, type ViewContext } from '../views.js';
import { type SiteRows, siteFacts, siteRows } from './siteContext.js';
import { type WaivedCells, waivedKey } from './waivedDrift.js';

/** Sites one `no-data`-only page looks through at most. */
const NO_DATA_SITES = 50;

/**
 * Most cells in a page across sites (no `site` or `sites`: a status, an environment, a component, the
 * whole matrix): its sites' rows and every cell's judgement are read per page, so such a page is kept
 * within the view budget (300 ms at 1,000 × 200 on two cores; decision 565); a window of named sites
 * keeps {@link MATRIX_PAGE_MAX}. The cursor reads the rest.
 */
export const SPANNING_PAGE_MAX = 1000;

/** The most cells a page of `q` holds (the query's `limit` within it). */
export function pageCap(q: Pick<MatrixQuery, 'site' | 'sites' | 'limit'>): number {
  const cap = q.site === undefined && q.sites === undefined ? SPANNING_PAGE_MAX : MATRIX_PAGE_MAX;
  return Math.min(q.limit ?? cap, cap);
}

type Key = { site: string; environment: string; component: string };
const keyText = (c: Key) => `${c.site}\u0000${c.environment}\u0000${c.component}`;
const byKey = (a: Key, b: Key) => {
  const x = keyText(a);
  const y = keyText(b);
  return x < y ? -1 : x > y ? 1 : 0;
};

/** `/api/matrix` cursors: the key of the page's last cell. */
export function encodeCellCursor(c: Key): string {
  return Buffer.from(JSON.stringify([c.site, c.environment, c.component])).toString('base64url');
}
export function decodeCellCursor(cursor: string | undefined): Key | undefined {
  if (!cursor) return undefined;
  try {
    const v = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(v) && v.length === 3) {
      const [site, environment, component] = v as unknown[];
      if (typeof site === 'string' && typeof environment === 'string' && typeof component === 'string')
        return { site, environment, component };
    }
  } catch {}
  return undefined;
}

export type WindowStore = Pick<
  ReadStore,
  | 'pageCells'
  | 'pageSites'
  | 'getSite'
  | 'listSites'
  | 'listAgents'
  | 'listAgentBriefs'
  | 'getRun'
  | 'getCells'
>;

/**
 * A window of the matrix now (docs/decisions/400-fleet-read-model.md): the cells of some sites
 * (`site`, `sites`) × columns (`environment`, `component`), or a filter (`status`, `stale`), in key order,
 * at most `limit` with a cursor, read through the read model's indexes. Only the window's sites' rows are
 * read; `no-data` cells (declared, not planned) are added for the sites and keys the page covers.
 */
export class MatrixWindow {
  constructor(
    private readonly store: WindowStore,
    private readonly defaultContactIntervalS: number | null,
    private readonly contactPlans?: ContactPlans,
  ) {}

  /** Cells whose drift is all waived (decision 421): marked `driftWaived`. Set by the hub. */
  waivedCells?: WaivedCells;

  async page(
    q: Omit<MatrixQuery, 'at' | 'ref'>,
    now: number,
  ): Promise<{ cells: MatrixCell[]; next: string | null }> {
    const limit = pageCap(q);
    const after = decodeCellCursor(q.cursor);
    if (q.status === 'no-data') return this.noDataOnly(q, limit, after, now);
    // Declared cells not planned yet are added only when no filter excludes them: only then does the
    // page read its sites' agents' cadences.
    const withNoData = q.status === undefined && q.stale !== true;
    const filter: CellPageQuery = {
      ...(q.site !== undefined ? { site: q.site } : {}),
      ...(q.sites ? { sites: q.sites } : {}),
      ...(q.environment !== undefined ? { environment: q.environment } : {}),
      ...(q.component !== undefined ? { component: q.component } : {}),
      ...(q.status !== undefined ? { status: q.status } : {}),
      ...(q.stale !== undefined ? { stale: q.stale, now } : {}),
      ...(after ? { after } : {}),
      limit: limit + 1,
    };
    const rows = await this.store.pageCells(filter);
    const more = rows.length > limit;
    const shown = rows.slice(0, limit);
    const last = more ? shown.at(-1) : undefined;
    const siteNames = q.site ? [q.site] : q.sites ? [...q.sites] : [...new Set(shown.map((c) => c.site))];
    const judge = await this.judge(siteNames, now, withNoData);
    const waived = this.waivedCells ? await this.waivedCells(now) : null;
    const cells = shown.map((c) => {
      const m = judge.cell(c);
      return waived?.has(waivedKey(c)) ? { ...m, driftWaived: true } : m;
    });
    // Declared cells not planned yet, within the page's range.
    if (withNoData) {
      const have = new Set(cells.map((c) => `${c.site}/${c.environment}/${c.component}`));
      for (const site of siteNames)
        for (const c of judge.noData(site, have))
          if (
            (!q.environment || c.environment === q.environment) &&
            (!q.component || c.component === q.component) &&
            (!after || byKey(c, after) > 0) &&
            (!last || byKey(c, last) < 0)
          )
            cells.push(c);
    }
    const out = q.stale === undefined ? cells : cells.filter((c) => c.stale === q.stale);
    out.sort(byKey);
    return { cells: await withDiagnostics(this.store, out), next: last ? encodeCellCursor(last) : null };
  }

  /** `status=no-data`: site by site from the cursor's, the declared cells not planned, bounded. */
  private async noDataOnly(
    q: Omit<MatrixQuery, 'at' | 'ref'>,
    limit: number,
    after: Key | undefined,
    now: number,
  ): Promise<{ cells: MatrixCell[]; next: string | null }> {
    let names: string[];
    if (q.site) names = [q.site];
    else if (q.sites) names = [...q.sites].sort();
    else {
      const all = await this.store.pageSites({ sort: 'site', offset: 0, limit: 100_000 });
      names = all.sites.filter((s) => !after || s >= after.site).slice(0, NO_DATA_SITES);
    }
    const judge = await this.judge(names, now);
    const out: MatrixCell[] = [];
    let looked = 0;
    for (const site of names) {
      looked++;
      const declared = judge.noData(site, new Set());
      const stored = await this.store.getCells(declared);
      const have = new Set(
        stored
          .filter((c): c is CellRow => c !== null)
          .map((c) => `${c.site}/${c.environment}/${c.component}`),
      );
      for (const c of judge.noData(site, have))
        if (
          (!q.environment || c.environment === q.environment) &&
          (!q.component || c.component === q.component) &&
          (!after || byKey(c, after) > 0)
        )
          out.push(c);
      if (out.length >= limit) break;
    }
    out.sort(byKey);
    const page = out.slice(0, limit);
    const lastSite = names.at(-1);
    const more =
      out.length > limit || looked < names.length || (!q.site && !q.sites && names.length === NO_DATA_SITES);
    const last =
      page.at(-1) ?? (lastSite ? { site: lastSite, environment: '\uffff', component: '' } : undefined);
    return { cells: page, next: more && last ? encodeCellCursor(last) : null };
  }

  /**
   * How the window's sites are judged now: unreachable, contact plan, and (with `declared`) the cells
   * their agents declared; without it, only the agents' facts are read.
   */
  private async judge(names: readonly string[], now: number, declared = true) {
    const full = declared ? await siteRows(this.store, names) : null;
    const rows: SiteRows<AgentFacts> = full ?? (await siteFacts(this.store, names));
    const ctx: ViewContext = { now, defaultContactIntervalS: this.defaultContactIntervalS };
    const judged = new Map<
      string,
      { unreachable: boolean; contact: ReturnType<ContactPlans['of']> | null }
    >();
    const of = (site: string) => {
      let j = judged.get(site);
      if (!j) {
        const row = rows.rows.get(site) ?? null;
        const agents = rows.agents.get(site) ?? [];
        const contact = this.contactPlans
          ? this.contactPlans.of(site, agents, row?.lastContactAt ?? null, now)
          : null;
        j = {
          contact,
          unreachable: contact?.judged ? contact.state === 'unreachable' : isUnreachable(row, agents, ctx),
        };
        judged.set(site, j);
      }
      return j;
    };
    const withContact = (c: MatrixCell) => {
      const k = of(c.site).contact;
      return k ? cellWithContact(c, k, rows.rows.get(c.site)?.lastContactAt ?? null, now) : c;
    };
    return {
      cell: (c: CellRow) => withContact(toMatrixCell(c, ctx, of(c.site).unreachable)),
      noData: (site: string, have: ReadonlySet<string>) =>
        noDataCells(full?.agents.get(site) ?? [], have, of(site).unreachable).map(withContact),
    };
  }
}
