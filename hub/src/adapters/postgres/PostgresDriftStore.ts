import type { EpisodeRow } from '../../core/drift/episodes.js';
import type { WaiverRow } from '../../core/drift/waivers.js';
import {
  type CellKey,
  type CellMark,
  type CellsState,
  cellKey,
  type DriftStore,
  type EpisodeFilter,
} from '../../ports/DriftStore.js';
import { LOCK } from './locks.js';
import type { PgDatabase, Step, Stmt } from './PgDatabase.js';

const st = (name: string, text: string): Stmt => ({ name: `drift_${name}`, text });

const S = {
  /** First in every write: the count cached reads compare, and one order of row locks for every writer. */
  bump: st('bump', "UPDATE drift_meta SET value = value + 1 WHERE key = 'changes'"),
  stamp: st('stamp', "SELECT value FROM drift_meta WHERE key = 'changes'"),
  openOf: st(
    'open_of',
    "SELECT row FROM drift_episodes WHERE site = $1 AND environment = $2 AND component = $3 AND state = 'open' ORDER BY seq",
  ),
  markOf: st(
    'mark_of',
    'SELECT planned_at FROM drift_marks WHERE site = $1 AND environment = $2 AND component = $3',
  ),
  /** Many cells at once: their keys as three arrays. */
  cellsMarks: st(
    'cells_marks',
    `SELECT m.site, m.environment, m.component, m.planned_at FROM drift_marks m
     JOIN unnest($1::text[], $2::text[], $3::text[]) AS t(site, environment, component)
     USING (site, environment, component)`,
  ),
  cellsOpen: st(
    'cells_open',
    `SELECT e.row FROM drift_episodes e
     JOIN unnest($1::text[], $2::text[], $3::text[]) AS t(site, environment, component)
     USING (site, environment, component) WHERE e.state = 'open' ORDER BY e.seq`,
  ),
  upEpisode: st(
    'up_episode',
    `INSERT INTO drift_episodes (id, kind, site, environment, component, address, type, signature, state, row)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
     ON CONFLICT (id) DO UPDATE SET state = EXCLUDED.state, row = EXCLUDED.row`,
  ),
  upMark: st(
    'up_mark',
    `INSERT INTO drift_marks (site, environment, component, planned_at) VALUES ($1, $2, $3, $4)
     ON CONFLICT (site, environment, component)
     DO UPDATE SET planned_at = greatest(drift_marks.planned_at, EXCLUDED.planned_at)`,
  ),
  listOpen: st('list_open', "SELECT row FROM drift_episodes WHERE state = 'open' ORDER BY seq"),
  get: st('get', 'SELECT row FROM drift_episodes WHERE id = $1'),
  putWaiver: st(
    'put_waiver',
    `INSERT INTO drift_waivers (id, created_at, row) VALUES ($1, $2, $3)
     ON CONFLICT (id) DO UPDATE SET row = EXCLUDED.row`,
  ),
  listWaivers: st('list_waivers', 'SELECT row FROM drift_waivers ORDER BY created_at, id'),
  getWaiver: st('get_waiver', 'SELECT row FROM drift_waivers WHERE id = $1'),
};

/** The filter columns, in a fixed order: which are set names the prepared statement (`drift_list_<bits>`). */
const COLUMNS = [
  'site',
  'environment',
  'component',
  'address',
  'type',
  'kind',
  'state',
  'signature',
] as const;

/**
 * DriftStore on PostgreSQL, in the hub store's database (decision 470): every hub on the database sees
 * the episodes any of them advanced and the waivers any of them (or `hub waiver`) added. Same semantics
 * as `SqliteDriftStore`; `record` is one transaction sent in one round trip.
 */
export class PostgresDriftStore implements DriftStore {
  constructor(private readonly db: PgDatabase) {
    db.retain();
  }

  async openOf(site: string, environment: string, component: string): Promise<EpisodeRow[]> {
    const rows = await this.db.query<{ row: EpisodeRow }>(S.openOf, [site, environment, component]);
    return rows.map((r) => r.row);
  }

  async markOf(site: string, environment: string, component: string): Promise<number | null> {
    const [r] = await this.db.query<{ planned_at: number }>(S.markOf, [site, environment, component]);
    return r ? r.planned_at : null;
  }

  async cellsState(cells: readonly CellKey[]): Promise<CellsState> {
    const out: CellsState = { marks: new Map(), open: new Map() };
    const unique = [...new Map(cells.map((c) => [cellKey(c), c])).values()];
    if (unique.length === 0) return out;
    const keys = [
      unique.map((c) => c.site),
      unique.map((c) => c.environment),
      unique.map((c) => c.component),
    ];
    const marks = await this.db.query<CellKey & { planned_at: number | string }>(S.cellsMarks, keys);
    for (const m of marks) out.marks.set(cellKey(m), Number(m.planned_at));
    for (const { row } of await this.db.query<{ row: EpisodeRow }>(S.cellsOpen, keys)) {
      const k = cellKey(row);
      out.open.set(k, [...(out.open.get(k) ?? []), row]);
    }
    return out;
  }

  record(w: { episodes: readonly EpisodeRow[]; marks: readonly CellMark[] }): Promise<void> {
    if (w.episodes.length === 0 && w.marks.length === 0) return Promise.resolve();
    const steps: Step[] = [[S.bump, []]];
    for (const e of w.episodes)
      steps.push([
        S.upEpisode,
        [
          e.id,
          e.kind,
          e.site,
          e.environment,
          e.component,
          e.address,
          e.type,
          e.signature,
          e.state,
          JSON.stringify(e),
        ],
      ]);
    for (const m of w.marks) steps.push([S.upMark, [m.site, m.environment, m.component, m.plannedAt]]);
    return this.db.pipeline(steps);
  }

  async list(f: EpisodeFilter, limit: number, before?: number): Promise<{ seq: number; row: EpisodeRow }[]> {
    const where: string[] = [];
    const args: unknown[] = [];
    let bits = 0;
    for (const [i, c] of COLUMNS.entries()) {
      const v = f[c];
      if (v === undefined) continue;
      args.push(v);
      where.push(`${c} = $${args.length}`);
      bits |= 1 << i;
    }
    if (before !== undefined) {
      args.push(before);
      where.push(`seq < $${args.length}`);
      bits |= 1 << COLUMNS.length;
    }
    args.push(Math.max(1, Math.min(limit, 10_000)));
    const text = `SELECT seq, row FROM drift_episodes ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY seq DESC LIMIT $${args.length}`;
    return this.db.query<{ seq: number; row: EpisodeRow }>(st(`list_${bits}`, text), args);
  }

  async listOpen(): Promise<EpisodeRow[]> {
    return (await this.db.query<{ row: EpisodeRow }>(S.listOpen)).map((r) => r.row);
  }

  async get(id: string): Promise<EpisodeRow | null> {
    const [r] = await this.db.query<{ row: EpisodeRow }>(S.get, [id]);
    return r ? r.row : null;
  }

  putWaiver(w: WaiverRow): Promise<void> {
    return this.db.pipeline([
      [S.bump, []],
      [S.putWaiver, [w.id, w.createdAt, JSON.stringify(w)]],
    ]);
  }

  async listWaivers(): Promise<WaiverRow[]> {
    return (await this.db.query<{ row: WaiverRow }>(S.listWaivers)).map((r) => r.row);
  }

  async getWaiver(id: string): Promise<WaiverRow | null> {
    const [r] = await this.db.query<{ row: WaiverRow }>(S.getWaiver, [id]);
    return r ? r.row : null;
  }

  async stamp(): Promise<string> {
    const [r] = await this.db.query<{ value: number }>(S.stamp);
    return String(r?.value ?? 0);
  }

  /**
   * Holds the drift lock on a connection of its own while `fn` runs its reads and writes on the pool. If
   * that connection breaks, the lock goes with it and `session` destroys it; `fn`'s own writes are each
   * one transaction, and an observation cut midway is repaired by the cell's next plan (decision 421).
   */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    return this.db.session(async (c) => {
      await c.query('SELECT pg_advisory_lock($1, 0)', [LOCK.drift]);
      try {
        return await fn();
      } finally {
        await c.query('SELECT pg_advisory_unlock($1, 0)', [LOCK.drift]);
      }
    });
  }

  close(): Promise<void> {
    return this.db.close();
  }
}
