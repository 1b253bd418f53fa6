import type Database from 'better-sqlite3';
import { cellColumns, OUTRANK_STALE } from '../../core/fleet/cellColumns.js';
import type {
  AttentionQuery,
  CellCount,
  CellPageQuery,
  CellRow,
  CellsOfRefQuery,
  CountScope,
  RefGateCell,
  RefGateCellsQuery,
  RefGateCount,
  RefGateQuery,
  RefTotal,
  RunRow,
  SitePageQuery,
} from '../../ports/HubStore.js';
import { GATE_COMPLETE_STATUSES } from '../../ports/HubStore.js';

type Row = { row: string };
const parseAll = (rs: Row[]): CellRow[] => rs.map((r) => JSON.parse(r.row) as CellRow);

/** Sites in `pageSites` order: the key expressions per sort (constants, not input). */
const SITE_ORDER: Record<SitePageQuery['sort'], string> = {
  site: 'n.site',
  '-site': 'n.site DESC',
  lastContact:
    "json_extract(s.row, '$.lastContactAt') IS NULL, json_extract(s.row, '$.lastContactAt'), n.site",
  '-lastContact':
    "json_extract(s.row, '$.lastContactAt') IS NULL, json_extract(s.row, '$.lastContactAt') DESC, n.site",
  problems: `(SELECT COALESCE(SUM(c.n), 0) FROM cell_counts c WHERE c.scope = 'site' AND c.key = n.site
      AND (c.kind IN ('failed', 'stuck-lock', 'drift') OR c.stale = 1)) DESC, n.site`,
};

/**
 * The read model on SQLite (docs/decisions/400-fleet-read-model.md): the cell upsert with its columns,
 * counts, windows of cells, the sweeper's stale step and the one-time backfill. Part of `SqliteHubStore`;
 * writes run inside its commit's transaction.
 */
export function readModelStatements(db: Database.Database) {
  const p = (sql: string) => db.prepare(sql);
  const s = {
    upCell: p(
      `INSERT INTO cells (site, environment, component, run_id, row, status, kind, planned_at, stale_at, stale, ref, received_at, git_commit)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (site, environment, component) DO UPDATE SET
       run_id = excluded.run_id, row = excluded.row, status = excluded.status, kind = excluded.kind,
       planned_at = excluded.planned_at, ref = excluded.ref, received_at = excluded.received_at, git_commit = excluded.git_commit,
       stale = CASE WHEN cells.stale_at IS excluded.stale_at THEN max(cells.stale, excluded.stale) ELSE excluded.stale END,
       stale_at = excluded.stale_at`,
    ),
    counts: p(
      'SELECT key, status, kind, stale, n FROM cell_counts WHERE scope = ? AND n > 0 ORDER BY key, status, kind, stale',
    ),
    countsOf: p(
      'SELECT key, status, kind, stale, n FROM cell_counts WHERE scope = ? AND key IN (SELECT value FROM json_each(?)) AND n > 0 ORDER BY key, status, kind, stale',
    ),
    due: p(
      'SELECT site, environment, component, row FROM cells WHERE stale = 0 AND stale_at IS NOT NULL AND stale_at < ? ORDER BY stale_at LIMIT ?',
    ),
    markStale: p('UPDATE cells SET stale = 1 WHERE site = ? AND environment = ? AND component = ?'),
    attentionStale: p(
      "SELECT row FROM cells WHERE stale = 1 AND kind IN ('', 'blocked') ORDER BY planned_at, site, environment, component LIMIT ?",
    ),
    unfilled: p(
      'SELECT row FROM cells WHERE (site, environment, component) > (?, ?, ?) AND status IS NULL ORDER BY site, environment, component LIMIT 500',
    ),
  };
  const pages = new Map<string, Database.Statement>();
  const attentionByKind = new Map<string, Database.Statement>();
  // Per ref: its count, and its newest plan and result of each kind of cell, each one index seek.
  const newest = (col: string) =>
    `max(coalesce((SELECT max(${col}) FROM cells c WHERE c.ref = r.ref), 0),
         coalesce((SELECT max(${col}) FROM ref_cells x WHERE x.ref = r.ref), 0))`;
  const refTotals = db.prepare(
    `SELECT r.ref AS ref, r.n AS cells, ${newest('planned_at')} AS plannedAt, ${newest('received_at')} AS receivedAt
     FROM ref_counts r WHERE r.n > 0 ORDER BY plannedAt DESC, r.ref LIMIT ?`,
  );
  // A range of the ref index after a key ('' before every key): a page of the ref's matrix (decision 650).
  const ofRef = db.prepare(
    'SELECT row FROM cells WHERE ref = @ref AND (site, environment, component) > (@s, @e, @c) ORDER BY site, environment, component LIMIT @limit',
  );
  const ofRefAt = db.prepare(
    'SELECT row FROM cells WHERE ref = @ref AND site = @site AND (environment, component) > (@e, @c) ORDER BY site, environment, component LIMIT @limit',
  );
  // The ref gate (decision 615): a default cell of the ref counts unless an `@ref` cell of the ref is
  // at its key (that one is the gate's, read apart); its plan of the commit is the cell when its latest
  // plan is of the commit, else its newest run of the ref at the commit.
  const notAtRef =
    'NOT EXISTS (SELECT 1 FROM ref_cells x WHERE x.site = c.site AND x.environment = c.environment AND x.component = c.component AND x.ref = c.ref)';
  const runOf = (col: string) =>
    `(SELECT r.${col} FROM runs r WHERE r.ref = @ref AND r.git_commit = @commit AND r.site = c.site AND r.environment = c.environment AND r.component = c.component ORDER BY r.run_id DESC LIMIT 1)`;
  const complete = `(${GATE_COMPLETE_STATUSES.map((x) => `'${x}'`).join(', ')})`;
  const gateTotal = db.prepare(`SELECT count(*) AS n FROM cells c WHERE c.ref = @ref AND ${notAtRef}`);
  const gateAt = db.prepare(
    `SELECT c.status AS status, count(*) AS n FROM cells c WHERE c.ref = @ref AND c.git_commit = @commit AND ${notAtRef} GROUP BY c.status`,
  );
  // Driven by the runs of the commit (few while a commit is new), newest per cell (SQLite's bare column).
  const gateMoved = db.prepare(
    `SELECT r.status AS status, count(*) AS n FROM (
       SELECT site, environment, component, status, max(run_id) FROM runs WHERE ref = @ref AND git_commit = @commit
       GROUP BY site, environment, component
     ) r JOIN cells c ON c.site = r.site AND c.environment = r.environment AND c.component = r.component
     WHERE c.ref = @ref AND c.git_commit IS NOT @commit AND ${notAtRef} GROUP BY r.status`,
  );
  const gateWindow = (all: boolean) =>
    db.prepare(
      `SELECT c.row AS row, CASE WHEN c.git_commit IS NOT @commit THEN ${runOf('row')} END AS run
       FROM cells c WHERE c.ref = @ref AND (c.site, c.environment, c.component) > (@site, @environment, @component)
       AND ${notAtRef}${
         all
           ? ''
           : ` AND NOT (c.git_commit IS @commit AND c.status IN ${complete})
       AND NOT (c.git_commit IS NOT @commit AND coalesce(${runOf('status')}, '') IN ${complete})`
       }
       ORDER BY c.site, c.environment, c.component LIMIT @limit`,
    );
  const gateCells = gateWindow(false);
  const gateAll = gateWindow(true);
  const siteTotals = new Map<string, Database.Statement>();
  const sitePages = new Map<string, Database.Statement>();
  const names = `(SELECT site FROM sites UNION SELECT site FROM agents) n`;
  return {
    /** The default cells of a commit, with their read-model columns (the triggers move the counts). */
    writeCells(cells: readonly CellRow[]): void {
      for (const c of cells) {
        const k = cellColumns(c);
        s.upCell.run(
          c.site,
          c.environment,
          c.component,
          c.runId,
          JSON.stringify(c),
          k.status,
          k.kind,
          k.plannedAt,
          k.staleAt,
          k.stale,
          k.ref,
          k.receivedAt,
          k.commit,
        );
      }
    },
    counts(scope: CountScope, keys?: readonly string[]): CellCount[] {
      const rows = (keys ? s.countsOf.all(scope, JSON.stringify(keys)) : s.counts.all(scope)) as {
        key: string;
        status: string;
        kind: string;
        stale: number;
        n: number;
      }[];
      return rows.map((r) => ({ ...r, stale: r.stale === 1 }));
    },
    page(q: CellPageQuery): CellRow[] {
      const where: string[] = [];
      const args: Record<string, unknown> = { limit: q.limit };
      const eq = (col: string, v: unknown) => {
        if (v === undefined) return;
        where.push(`${col} = @${col}`);
        args[col] = v;
      };
      eq('site', q.site);
      eq('environment', q.environment);
      eq('component', q.component);
      // A literal (an API status, checked here) lets SQLite use the partial index of statuses but clean.
      if (q.status !== undefined) {
        if (!/^[a-z-]{1,40}$/.test(q.status)) return [];
        // The partial index's own term, so SQLite knows the index holds the rows asked for.
        where.push(
          q.status === 'clean' ? "status = 'clean'" : `status <> 'clean' AND status = '${q.status}'`,
        );
      }
      eq('kind', q.kind);
      if (q.stale !== undefined && q.now !== undefined) {
        where.push(
          q.stale ? '(stale = 1 OR stale_at < @now)' : 'stale = 0 AND (stale_at IS NULL OR stale_at >= @now)',
        );
        args.now = q.now;
      } else if (q.stale !== undefined) eq('stale', q.stale ? 1 : 0);
      if (q.sites) {
        where.push('site IN (SELECT value FROM json_each(@sites))');
        args.sites = JSON.stringify(q.sites);
      }
      if (q.after) {
        where.push('(site, environment, component) > (@as, @ae, @ac)');
        Object.assign(args, { as: q.after.site, ae: q.after.environment, ac: q.after.component });
      }
      // Without statistics SQLite would walk the primary key and filter: name the index that holds the
      // window (a status but clean, or one environment across sites).
      const index =
        q.status !== undefined && q.status !== 'clean'
          ? 'INDEXED BY cells_status'
          : q.environment !== undefined &&
              q.site === undefined &&
              q.sites === undefined &&
              q.status === undefined
            ? 'INDEXED BY cells_environment'
            : '';
      const sql = `SELECT row FROM cells ${index} ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY site, environment, component LIMIT @limit`;
      let st = pages.get(sql);
      if (!st) {
        st = db.prepare(sql);
        pages.set(sql, st);
      }
      return parseAll(st.all(args) as Row[]);
    },
    /** `ReadStore.refTotals`: from `ref_counts` and the ref indexes, no cell row read. */
    refTotals(limit: number): RefTotal[] {
      return refTotals.all(limit) as RefTotal[];
    },
    /** `ReadStore.listCellsOfRef`: by the ref index (one site's: by its key), never every cell. */
    cellsOfRef(q: CellsOfRefQuery): CellRow[] {
      const a = q.after ?? { site: '', environment: '', component: '' };
      const { ref, limit } = q;
      // One site's range starts after the key only within that site: past it, nothing; before it, all.
      if (q.site !== undefined && a.site > q.site) return [];
      const within = a.site === q.site;
      const rows =
        q.site === undefined
          ? ofRef.all({ ref, s: a.site, e: a.environment, c: a.component, limit })
          : ofRefAt.all({
              ref,
              site: q.site,
              e: within ? a.environment : '',
              c: within ? a.component : '',
              limit,
            });
      return parseAll(rows as Row[]);
    },
    /** `ReadStore.refGateCounts`: from the ref index (and the runs of the commit), no cell row read. */
    refGateCounts(q: RefGateQuery): RefGateCount[] {
      const by = new Map<string | null, number>();
      const add = (rows: unknown[]) => {
        for (const r of rows as RefGateCount[]) by.set(r.status, (by.get(r.status) ?? 0) + r.n);
      };
      add(gateAt.all(q));
      add(gateMoved.all(q));
      const total = (gateTotal.get(q) as { n: number }).n;
      const none = total - [...by.values()].reduce((a, b) => a + b, 0);
      if (none > 0) by.set(null, none);
      return [...by].map(([status, n]) => ({ status, n }));
    },
    /** `ReadStore.refGateCells`: a window of the ref index, the rows of those cells only. */
    refGateCells(q: RefGateCellsQuery): RefGateCell[] {
      const after = q.after ?? { site: '', environment: '', component: '' };
      const rows = (q.all ? gateAll : gateCells).all({
        ref: q.ref,
        commit: q.commit,
        site: after.site,
        environment: after.environment,
        component: after.component,
        limit: q.limit,
      }) as { row: string; run: string | null }[];
      return rows.map((r) => ({
        cell: JSON.parse(r.row) as CellRow,
        run: r.run === null ? null : (JSON.parse(r.run) as RunRow),
      }));
    },
    attention(q: AttentionQuery): CellRow[] {
      if (q.kind === 'stale') return parseAll(s.attentionStale.all(q.limit) as Row[]);
      // The kind as a literal (checked here) lets SQLite use the partial index of kinds but ''.
      if (!/^[a-z-]{1,40}$/.test(q.kind)) return [];
      let st = attentionByKind.get(q.kind);
      if (!st) {
        st = db.prepare(
          `SELECT row FROM cells INDEXED BY cells_kind WHERE kind <> '' AND kind = '${q.kind}'${OUTRANK_STALE.includes(`'${q.kind}'`) ? '' : ' AND stale = 0'} ORDER BY planned_at, site, environment, component LIMIT ?`,
        );
        attentionByKind.set(q.kind, st);
      }
      return parseAll(st.all(q.limit) as Row[]);
    },
    sites(q: SitePageQuery): { sites: string[]; total: number } {
      const filter = q.contains ? 'WHERE instr(n.site, @contains) > 0' : '';
      const key = `${q.sort}|${filter}`;
      let page = sitePages.get(key);
      if (!page) {
        page = db.prepare(
          `SELECT n.site AS site FROM ${names} LEFT JOIN sites s ON s.site = n.site ${filter}
           ORDER BY ${SITE_ORDER[q.sort]} LIMIT @limit OFFSET @offset`,
        );
        sitePages.set(key, page);
      }
      let total = siteTotals.get(filter);
      if (!total) {
        total = db.prepare(`SELECT COUNT(*) AS n FROM ${names} ${filter}`);
        siteTotals.set(filter, total);
      }
      const args = { limit: q.limit, offset: q.offset, ...(q.contains ? { contains: q.contains } : {}) };
      return {
        sites: (page.all(args) as { site: string }[]).map((r) => r.site),
        total: (total.get(q.contains ? { contains: q.contains } : {}) as { n: number }).n,
      };
    },
    /** The sweeper's bounded step: cells past their deadline, marked stale (call inside a transaction). */
    advanceStale(now: number, limit: number): CellRow[] {
      const due = s.due.all(now, limit) as (Row & { site: string; environment: string; component: string })[];
      for (const d of due) s.markStale.run(d.site, d.environment, d.component);
      return parseAll(due);
    },
    /**
     * Cells stored before the read model: their columns filled, 500 per step in key order from `after`
     * (call each inside a transaction); answers the last key filled, or null when none was left.
     */
    backfillStep(after: [string, string, string]): [string, string, string] | null {
      const rows = parseAll(s.unfilled.all(...after) as Row[]);
      this.writeCells(rows);
      const last = rows.at(-1);
      return last ? [last.site, last.environment, last.component] : null;
    },
  };
}
