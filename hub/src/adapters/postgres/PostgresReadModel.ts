import { createHash } from 'node:crypto';
import { OUTRANK_STALE } from '../../core/fleet/cellColumns.js';
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
import type { PgDatabase, Stmt } from './PgDatabase.js';
import { writeSteps } from './writeStatements.js';

const st = (name: string, text: string): Stmt => ({ name: `hub_m_${name}`, text });
const NAMES = '(SELECT site FROM sites UNION SELECT site FROM agents) n';
const CONTACT = "(s.row->>'lastContactAt')::bigint";
/** Sites in `pageSites` order: the key expressions per sort (constants, not input). */
const SITE_ORDER: Record<SitePageQuery['sort'], string> = {
  site: 'n.site',
  '-site': 'n.site DESC',
  lastContact: `${CONTACT} ASC NULLS LAST, n.site`,
  '-lastContact': `${CONTACT} DESC NULLS LAST, n.site`,
  problems: `(SELECT COALESCE(SUM(c.n), 0) FROM cell_counts c WHERE c.scope = 'site' AND c.key = n.site
      AND (c.kind IN ('failed', 'stuck-lock', 'drift') OR c.stale = 1)) DESC, n.site`,
};
const newest = (col: string) =>
  `GREATEST(COALESCE((SELECT max(c.${col}) FROM cells c WHERE c.ref = r.ref), 0),
     COALESCE((SELECT max(x.${col}) FROM ref_cells x WHERE x.ref = r.ref), 0))`;
// The ref gate (decision 615): a default cell of the ref counts unless an `@ref` cell of the ref is at
// its key; its plan of the commit is the cell when its latest plan is of it, else its newest run of it.
const NOT_AT_REF =
  'NOT EXISTS (SELECT 1 FROM ref_cells x WHERE x.site = c.site AND x.environment = c.environment AND x.component = c.component AND x.ref = c.ref)';
const runOf = (col: string) =>
  `(SELECT r.${col} FROM runs r WHERE r.ref = $1 AND r.git_commit = $2 AND r.site = c.site AND r.environment = c.environment AND r.component = c.component ORDER BY r.run_id DESC LIMIT 1)`;
const COMPLETE = `(${GATE_COMPLETE_STATUSES.map((x) => `'${x}'`).join(', ')})`;
const gateWindow = (all: boolean) =>
  `SELECT c.row, CASE WHEN c.git_commit IS DISTINCT FROM $2 THEN ${runOf('row')} END AS run
   FROM cells c WHERE c.ref = $1 AND (c.site, c.environment, c.component) > ($3, $4, $5) AND ${NOT_AT_REF}${
     all
       ? ''
       : ` AND NOT (c.git_commit IS NOT DISTINCT FROM $2 AND c.status IN ${COMPLETE})
   AND NOT (c.git_commit IS DISTINCT FROM $2 AND coalesce(${runOf('status')}, '') IN ${COMPLETE})`
   }
   ORDER BY c.site, c.environment, c.component LIMIT $6`;
const M = {
  gateTotal: st('gate_total', `SELECT count(*) AS n FROM cells c WHERE c.ref = $1 AND ${NOT_AT_REF}`),
  gateAt: st(
    'gate_at',
    `SELECT c.status, count(*) AS n FROM cells c WHERE c.ref = $1 AND c.git_commit = $2 AND ${NOT_AT_REF} GROUP BY c.status`,
  ),
  // Driven by the runs of the commit (few while a commit is new), the newest per cell.
  gateMoved: st(
    'gate_moved',
    `SELECT r.status, count(*) AS n FROM (
       SELECT DISTINCT ON (site, environment, component) site, environment, component, status FROM runs
       WHERE ref = $1 AND git_commit = $2 ORDER BY site, environment, component, run_id DESC
     ) r JOIN cells c ON c.site = r.site AND c.environment = r.environment AND c.component = r.component
     WHERE c.ref = $1 AND c.git_commit IS DISTINCT FROM $2 AND ${NOT_AT_REF} GROUP BY r.status`,
  ),
  gateCells: st('gate_cells', gateWindow(false)),
  gateAll: st('gate_all', gateWindow(true)),
  counts: st(
    'counts',
    'SELECT key, status, kind, stale, n FROM cell_counts WHERE scope = $1 AND n > 0 ORDER BY key, status, kind, stale',
  ),
  countsOf: st(
    'counts_of',
    'SELECT key, status, kind, stale, n FROM cell_counts WHERE scope = $1 AND key = ANY($2::text[]) AND n > 0 ORDER BY key, status, kind, stale',
  ),
  attention: st(
    'attention',
    `SELECT row FROM cells WHERE kind = $1 AND (stale = 0 OR kind IN ${OUTRANK_STALE}) ORDER BY planned_at, site, environment, component LIMIT $2`,
  ),
  attentionStale: st(
    'attention_stale',
    "SELECT row FROM cells WHERE stale = 1 AND kind IN ('', 'blocked') ORDER BY planned_at, site, environment, component LIMIT $1",
  ),
  /** Locked rows another hub's sweep holds are left to it (SKIP LOCKED): each cell is marked once. */
  advance: st(
    'advance',
    `UPDATE cells SET stale = 1 WHERE (site, environment, component) IN (
       SELECT site, environment, component FROM cells WHERE stale = 0 AND stale_at IS NOT NULL AND stale_at < $1
       ORDER BY stale_at LIMIT $2 FOR UPDATE SKIP LOCKED) RETURNING row`,
  ),
  // Per ref: its count, and its newest plan and result of each kind of cell, each one index seek.
  refTotals: st(
    'ref_totals',
    `SELECT r.ref, r.n AS cells, ${newest('planned_at')} AS "plannedAt", ${newest('received_at')} AS "receivedAt"
     FROM ref_counts r WHERE r.n > 0 ORDER BY 3 DESC, r.ref LIMIT $1`,
  ),
  // By the ref index (one site's: by its key); the ref column is filled since migration 7.
  // A range after a key ('' before every key): a page of the ref's matrix (decision 650).
  cellsOfRef: st(
    'cells_of_ref_after',
    `SELECT row FROM cells WHERE ref = $1
     AND (site, environment, component) > ($3::text COLLATE "C", $4::text COLLATE "C", $5::text COLLATE "C")
     ORDER BY site, environment, component LIMIT $2`,
  ),
  cellsOfRefAt: st(
    'cells_of_ref_at_after',
    `SELECT row FROM cells WHERE ref = $1 AND site = $2
     AND (environment, component) > ($4::text COLLATE "C", $5::text COLLATE "C")
     ORDER BY site, environment, component LIMIT $3`,
  ),
  unfilled: st(
    'unfilled',
    `SELECT site, environment, component, row FROM cells WHERE (site, environment, component) > ($1, $2, $3)
     AND status IS NULL ORDER BY site, environment, component LIMIT 500`,
  ),
};

/** The read model on PostgreSQL (docs/decisions/400-fleet-read-model.md); part of `PostgresHubStore`. */
export class PostgresReadModel {
  private filled: Promise<void> | null = null;
  constructor(private readonly db: PgDatabase) {}

  /** Cells stored before migration 4 get their columns (and counts) once, 500 per transaction, in key order. */
  private ready(): Promise<void> {
    this.filled ??= (async () => {
      for (let after = ['', '', '']; ; ) {
        const rows = (await this.db.query<{ row: CellRow }>(M.unfilled, after)).map((r) => r.row);
        const last = rows.at(-1);
        if (!last) return;
        await this.db.pipeline(writeSteps({ cells: rows }));
        after = [last.site, last.environment, last.component];
      }
    })().catch((e) => {
      this.filled = null;
      throw e;
    });
    return this.filled;
  }

  async counts(scope: CountScope, keys?: readonly string[]): Promise<CellCount[]> {
    await this.ready();
    const rows = await this.db.query<{ key: string; status: string; kind: string; stale: number; n: number }>(
      keys ? M.countsOf : M.counts,
      keys ? [scope, [...keys]] : [scope],
    );
    return rows.map((r) => ({ ...r, stale: Number(r.stale) === 1, n: Number(r.n) }));
  }

  async page(q: CellPageQuery): Promise<CellRow[]> {
    await this.ready();
    const where: string[] = [];
    const values: unknown[] = [];
    const eq = (col: string, v: unknown) => {
      if (v === undefined) return;
      values.push(v);
      where.push(`${col} = $${values.length}`);
    };
    eq('site', q.site);
    eq('environment', q.environment);
    eq('component', q.component);
    eq('status', q.status);
    eq('kind', q.kind);
    if (q.stale !== undefined && q.now !== undefined) {
      values.push(q.now);
      const n = values.length;
      where.push(
        q.stale ? `(stale = 1 OR stale_at < $${n})` : `stale = 0 AND (stale_at IS NULL OR stale_at >= $${n})`,
      );
    } else if (q.stale !== undefined) eq('stale', q.stale ? 1 : 0);
    if (q.sites) {
      values.push([...q.sites]);
      where.push(`site = ANY($${values.length}::text[])`);
    }
    if (q.after) {
      values.push(q.after.site, q.after.environment, q.after.component);
      const n = values.length;
      where.push(`(site, environment, component) > ($${n - 2}, $${n - 1}, $${n})`);
    }
    values.push(q.limit);
    const text = `SELECT row FROM cells ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY site, environment, component LIMIT $${values.length}`;
    // Named by its text: one prepared statement per combination of filters.
    const name = `page_${createHash('sha256').update(text).digest('hex').slice(0, 16)}`;
    return (await this.db.query<{ row: CellRow }>(st(name, text), values)).map((r) => r.row);
  }

  async refTotals(limit: number): Promise<RefTotal[]> {
    const rows = await this.db.query<RefTotal>(M.refTotals, [limit]);
    return rows.map((r) => ({
      ref: r.ref,
      cells: Number(r.cells),
      plannedAt: Number(r.plannedAt),
      receivedAt: Number(r.receivedAt),
    }));
  }

  async cellsOfRef(q: CellsOfRefQuery): Promise<CellRow[]> {
    const a = q.after ?? { site: '', environment: '', component: '' };
    // One site's range starts after the key only within that site: past it, nothing; before it, all.
    if (q.site !== undefined && a.site > q.site) return [];
    const within = a.site === q.site;
    const rows =
      q.site === undefined
        ? await this.db.query<{ row: CellRow }>(M.cellsOfRef, [
            q.ref,
            q.limit,
            a.site,
            a.environment,
            a.component,
          ])
        : await this.db.query<{ row: CellRow }>(M.cellsOfRefAt, [
            q.ref,
            q.site,
            q.limit,
            within ? a.environment : '',
            within ? a.component : '',
          ]);
    return rows.map((r) => r.row);
  }

  async refGateCounts(q: RefGateQuery): Promise<RefGateCount[]> {
    const [total, at, moved] = await Promise.all([
      this.db.query<{ n: string }>(M.gateTotal, [q.ref]),
      this.db.query<{ status: string; n: string }>(M.gateAt, [q.ref, q.commit]),
      this.db.query<{ status: string; n: string }>(M.gateMoved, [q.ref, q.commit]),
    ]);
    const by = new Map<string | null, number>();
    for (const r of [...at, ...moved]) by.set(r.status, (by.get(r.status) ?? 0) + Number(r.n));
    const none = Number(total[0]?.n ?? 0) - [...by.values()].reduce((a, b) => a + b, 0);
    if (none > 0) by.set(null, none);
    return [...by].map(([status, n]) => ({ status, n }));
  }

  async refGateCells(q: RefGateCellsQuery): Promise<RefGateCell[]> {
    const after = q.after ?? { site: '', environment: '', component: '' };
    const rows = await this.db.query<{ row: CellRow; run: RunRow | null }>(q.all ? M.gateAll : M.gateCells, [
      q.ref,
      q.commit,
      after.site,
      after.environment,
      after.component,
      q.limit,
    ]);
    return rows.map((r) => ({ cell: r.row, run: r.run ?? null }));
  }

  async attention(q: AttentionQuery): Promise<CellRow[]> {
    await this.ready();
    const rows =
      q.kind === 'stale'
        ? await this.db.query<{ row: CellRow }>(M.attentionStale, [q.limit])
        : await this.db.query<{ row: CellRow }>(M.attention, [q.kind, q.limit]);
    return rows.map((r) => r.row);
  }

  async sites(q: SitePageQuery): Promise<{ sites: string[]; total: number }> {
    const filter = q.contains ? 'WHERE strpos(n.site, $3) > 0' : '';
    const args = q.contains ? [q.limit, q.offset, q.contains] : [q.limit, q.offset];
    const page = st(
      `sites_${q.sort.replace('-', 'desc_')}_${q.contains ? 'f' : 'a'}`,
      `SELECT n.site AS site FROM ${NAMES} LEFT JOIN sites s ON s.site = n.site ${filter}
       ORDER BY ${SITE_ORDER[q.sort]} LIMIT $1 OFFSET $2`,
    );
    const total = st(
      `sites_total_${q.contains ? 'f' : 'a'}`,
      `SELECT COUNT(*)::int AS n FROM ${NAMES} ${q.contains ? 'WHERE strpos(n.site, $1) > 0' : ''}`,
    );
    const [rows, [t]] = await Promise.all([
      this.db.query<{ site: string }>(page, args),
      this.db.query<{ n: number }>(total, q.contains ? [q.contains] : []),
    ]);
    return { sites: rows.map((r) => r.site), total: Number(t?.n ?? 0) };
  }

  async advanceStale(now: number, limit: number): Promise<CellRow[]> {
    await this.ready();
    return (await this.db.query<{ row: CellRow }>(M.advance, [now, limit])).map((r) => r.row);
  }
}
