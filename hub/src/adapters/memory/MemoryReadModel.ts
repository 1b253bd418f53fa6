import { type CellColumns, cellColumns, kindWithStale } from '../../core/fleet/cellColumns.js';
import type {
  AttentionQuery,
  CellCount,
  CellKey,
  CellPageQuery,
  CellRow,
  CellsOfRefQuery,
  CountScope,
  RefTotal,
  SitePageQuery,
} from '../../ports/HubStore.js';

const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const keyOf = (c: Pick<CellRow, 'site' | 'environment' | 'component'>) =>
  `${c.site}\u0000${c.environment}\u0000${c.component}`;
const byCell = (a: CellKey, b: CellKey) =>
  byText(a.site, b.site) || byText(a.environment, b.environment) || byText(a.component, b.component);
const SCOPE_KEY: Record<CountScope, (c: CellRow) => string> = {
  site: (c) => c.site,
  environment: (c) => c.environment,
  component: (c) => c.component,
  siteEnvironment: (c) => `${c.site}/${c.environment}`,
};

/**
 * The read model of `MemoryHubStore`: the columns the stores keep beside each default cell, and the
 * same answers computed by walking the (small, in-test) cells, as the contract suite expects.
 */
export class MemoryReadModel {
  private readonly cols = new Map<string, CellColumns>();

  /** A default cell written: its columns, the stale flag kept while its deadline stays the same. */
  write(c: CellRow): void {
    const next = cellColumns(c);
    const prev = this.cols.get(keyOf(c));
    if (prev && prev.staleAt === next.staleAt && prev.stale === 1) next.stale = 1;
    this.cols.set(keyOf(c), next);
  }

  private col(c: CellRow): CellColumns {
    return this.cols.get(keyOf(c)) ?? cellColumns(c);
  }

  counts(cells: Iterable<CellRow>, scope: CountScope, keys?: readonly string[]): CellCount[] {
    const want = keys ? new Set(keys) : null;
    const m = new Map<string, CellCount>();
    for (const c of cells) {
      const key = SCOPE_KEY[scope](c);
      if (want && !want.has(key)) continue;
      const k = this.col(c);
      const id = JSON.stringify([key, k.status, k.kind, k.stale]);
      const row = m.get(id) ?? { key, status: k.status, kind: k.kind, stale: k.stale === 1, n: 0 };
      row.n++;
      m.set(id, row);
    }
    return [...m.values()].sort(
      (a, b) =>
        byText(a.key, b.key) ||
        byText(a.status, b.status) ||
        byText(a.kind, b.kind) ||
        Number(a.stale) - Number(b.stale),
    );
  }

  page(cells: Iterable<CellRow>, q: CellPageQuery): CellRow[] {
    const sites = q.sites ? new Set(q.sites) : null;
    const after = q.after ? keyOf(q.after as CellRow) : null;
    return [...cells]
      .filter((c) => {
        const k = this.col(c);
        return (
          (q.site === undefined || c.site === q.site) &&
          (!sites || sites.has(c.site)) &&
          (q.environment === undefined || c.environment === q.environment) &&
          (q.component === undefined || c.component === q.component) &&
          (q.status === undefined || k.status === q.status) &&
          (q.kind === undefined || k.kind === q.kind) &&
          (q.stale === undefined ||
            (k.stale === 1 || (q.now !== undefined && k.staleAt !== null && k.staleAt < q.now)) ===
              q.stale) &&
          (after === null || byText(keyOf(c), after) > 0)
        );
      })
      .sort(byCell)
      .slice(0, q.limit);
  }

  /** Default and `@ref` cells by ref (an `@ref` cell's is its `atRef`), newest plan first, then by ref. */
  refTotals(cells: Iterable<CellRow>, limit: number): RefTotal[] {
    const by = new Map<string, RefTotal>();
    for (const c of cells) {
      const ref = c.atRef || c.ref;
      if (!ref) continue;
      const t = by.get(ref) ?? { ref, cells: 0, plannedAt: 0, receivedAt: 0 };
      t.cells++;
      t.plannedAt = Math.max(t.plannedAt, c.plannedAt);
      t.receivedAt = Math.max(t.receivedAt, c.receivedAt);
      by.set(ref, t);
    }
    return [...by.values()].sort((a, b) => b.plannedAt - a.plannedAt || byText(a.ref, b.ref)).slice(0, limit);
  }

  /** Default cells whose ref column is `q.ref` ('' is none, as the stores keep it), by cell. */
  cellsOfRef(cells: Iterable<CellRow>, q: CellsOfRefQuery): CellRow[] {
    return [...cells]
      .filter(
        (c) =>
          this.col(c).ref === q.ref &&
          (q.site === undefined || c.site === q.site) &&
          (!q.after || byCell(c, q.after) > 0),
      )
      .sort(byCell)
      .slice(0, q.limit);
  }

  attention(cells: Iterable<CellRow>, q: AttentionQuery): CellRow[] {
    return [...cells]
      .filter((c) => {
        const k = this.col(c);
        return q.kind === 'stale'
          ? kindWithStale(k.kind, k.stale === 1) === 'stale'
          : k.kind === q.kind && kindWithStale(k.kind, k.stale === 1) === q.kind;
      })
      .sort((a, b) => a.plannedAt - b.plannedAt || byCell(a, b))
      .slice(0, q.limit);
  }

  sites(
    names: Iterable<string>,
    cells: Iterable<CellRow>,
    lastContact: (site: string) => number | null,
    q: SitePageQuery,
  ): { sites: string[]; total: number } {
    const all = [...new Set(names)].filter((s) => !q.contains || s.includes(q.contains));
    const problems = new Map<string, number>();
    for (const c of cells) {
      const k = this.col(c);
      if (['failed', 'stuck-lock', 'drift'].includes(k.kind) || k.stale === 1)
        problems.set(c.site, (problems.get(c.site) ?? 0) + 1);
    }
    const contact = (s: string) => lastContact(s);
    const byContact = (dir: 1 | -1) => (a: string, b: string) => {
      const x = contact(a);
      const y = contact(b);
      if (x === null || y === null) return Number(x === null) - Number(y === null) || byText(a, b);
      return (x - y) * dir || byText(a, b);
    };
    const sorts: Record<SitePageQuery['sort'], (a: string, b: string) => number> = {
      site: byText,
      '-site': (a, b) => byText(b, a),
      lastContact: byContact(1),
      '-lastContact': byContact(-1),
      problems: (a, b) => (problems.get(b) ?? 0) - (problems.get(a) ?? 0) || byText(a, b),
    };
    all.sort(sorts[q.sort]);
    return { sites: all.slice(q.offset, q.offset + q.limit), total: all.length };
  }

  advanceStale(cells: Iterable<CellRow>, now: number, limit: number): CellRow[] {
    const due = [...cells]
      .filter((c) => {
        const k = this.col(c);
        return k.stale === 0 && k.staleAt !== null && k.staleAt < now;
      })
      .sort((a, b) => (this.col(a).staleAt ?? 0) - (this.col(b).staleAt ?? 0))
      .slice(0, limit);
    for (const c of due) this.cols.set(keyOf(c), { ...this.col(c), stale: 1 });
    return due;
  }
}
