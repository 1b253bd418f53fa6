import { openWalDatabase } from '@driftline/hop/sqlite';
import type Database from 'better-sqlite3';
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

/** Version 1 of the drift file: episodes, the cells' marks, waivers (decision 421). */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS episodes (
  seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, kind TEXT NOT NULL, site TEXT NOT NULL,
  environment TEXT NOT NULL, component TEXT NOT NULL, address TEXT NOT NULL, type TEXT NOT NULL,
  signature TEXT NOT NULL, state TEXT NOT NULL, row TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS episodes_cell ON episodes (site, environment, component, state);
CREATE INDEX IF NOT EXISTS episodes_open ON episodes (state, seq);
CREATE INDEX IF NOT EXISTS episodes_signature ON episodes (signature, seq);
CREATE TABLE IF NOT EXISTS marks (
  site TEXT NOT NULL, environment TEXT NOT NULL, component TEXT NOT NULL, planned_at INTEGER NOT NULL,
  PRIMARY KEY (site, environment, component)
);
CREATE TABLE IF NOT EXISTS waivers (id TEXT PRIMARY KEY, created_at INTEGER NOT NULL, row TEXT NOT NULL);
INSERT OR IGNORE INTO meta (key, value) VALUES ('drift-schema', '1');
`;

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

/** DriftStore on its own SQLite file beside the hub's (`drift.db`), WAL mode; `record` is one transaction. */
export class SqliteDriftStore implements DriftStore {
  private readonly db: Database.Database;
  private readonly s;
  /** Own writes: SQLite's `data_version` counts only other connections' commits. */
  private writes = 0;

  constructor(path: string) {
    this.db = openWalDatabase(path, { synchronous: 'NORMAL' });
    this.db.exec(SCHEMA);
    const db = this.db;
    this.s = {
      openOf: db.prepare(
        "SELECT row FROM episodes WHERE site = ? AND environment = ? AND component = ? AND state = 'open'",
      ),
      openOfInOrder: db.prepare(
        "SELECT row FROM episodes WHERE site = ? AND environment = ? AND component = ? AND state = 'open' ORDER BY seq",
      ),
      markOf: db.prepare('SELECT planned_at FROM marks WHERE site = ? AND environment = ? AND component = ?'),
      upEpisode: db.prepare(
        `INSERT INTO episodes (id, kind, site, environment, component, address, type, signature, state, row)
         VALUES (@id, @kind, @site, @environment, @component, @address, @type, @signature, @state, @row)
         ON CONFLICT (id) DO UPDATE SET state = excluded.state, row = excluded.row`,
      ),
      upMark: db.prepare(
        `INSERT INTO marks (site, environment, component, planned_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (site, environment, component) DO UPDATE SET planned_at = max(planned_at, excluded.planned_at)`,
      ),
      listOpen: db.prepare("SELECT row FROM episodes WHERE state = 'open' ORDER BY seq"),
      get: db.prepare('SELECT row FROM episodes WHERE id = ?'),
      putWaiver: db.prepare(
        'INSERT INTO waivers (id, created_at, row) VALUES (?, ?, ?) ON CONFLICT (id) DO UPDATE SET row = excluded.row',
      ),
      listWaivers: db.prepare('SELECT row FROM waivers ORDER BY created_at, id'),
      getWaiver: db.prepare('SELECT row FROM waivers WHERE id = ?'),
    };
  }

  private readonly tx = (w: { episodes: readonly EpisodeRow[]; marks: readonly CellMark[] }) => {
    for (const e of w.episodes)
      this.s.upEpisode.run({
        id: e.id,
        kind: e.kind,
        site: e.site,
        environment: e.environment,
        component: e.component,
        address: e.address,
        type: e.type,
        signature: e.signature,
        state: e.state,
        row: JSON.stringify(e),
      });
    for (const m of w.marks) this.s.upMark.run(m.site, m.environment, m.component, m.plannedAt);
  };

  async openOf(site: string, environment: string, component: string): Promise<EpisodeRow[]> {
    return (this.s.openOf.all(site, environment, component) as { row: string }[]).map((r) =>
      JSON.parse(r.row),
    );
  }

  async markOf(site: string, environment: string, component: string): Promise<number | null> {
    const r = this.s.markOf.get(site, environment, component) as { planned_at: number } | undefined;
    return r ? r.planned_at : null;
  }

  async cellsState(cells: readonly CellKey[]): Promise<CellsState> {
    const out: CellsState = { marks: new Map(), open: new Map() };
    this.db.transaction(() => {
      for (const c of cells) {
        const k = cellKey(c);
        const m = this.s.markOf.get(c.site, c.environment, c.component) as { planned_at: number } | undefined;
        if (m) out.marks.set(k, m.planned_at);
        const rows = this.s.openOfInOrder.all(c.site, c.environment, c.component) as { row: string }[];
        if (rows.length > 0)
          out.open.set(
            k,
            rows.map((r) => JSON.parse(r.row)),
          );
      }
    })();
    return out;
  }

  async record(w: { episodes: readonly EpisodeRow[]; marks: readonly CellMark[] }): Promise<void> {
    this.db.transaction(this.tx)(w);
    this.writes++;
  }

  async list(f: EpisodeFilter, limit: number, before?: number): Promise<{ seq: number; row: EpisodeRow }[]> {
    const where: string[] = [];
    const args: (string | number)[] = [];
    for (const c of COLUMNS) {
      const v = f[c];
      if (v === undefined) continue;
      where.push(`${c} = ?`);
      args.push(v);
    }
    if (before !== undefined) {
      where.push('seq < ?');
      args.push(before);
    }
    const sql = `SELECT seq, row FROM episodes ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY seq DESC LIMIT ?`;
    const rows = this.db.prepare(sql).all(...args, Math.max(1, Math.min(limit, 10_000))) as {
      seq: number;
      row: string;
    }[];
    return rows.map((r) => ({ seq: r.seq, row: JSON.parse(r.row) as EpisodeRow }));
  }

  async listOpen(): Promise<EpisodeRow[]> {
    return (this.s.listOpen.all() as { row: string }[]).map((r) => JSON.parse(r.row));
  }

  async get(id: string): Promise<EpisodeRow | null> {
    const r = this.s.get.get(id) as { row: string } | undefined;
    return r ? JSON.parse(r.row) : null;
  }

  async putWaiver(w: WaiverRow): Promise<void> {
    this.s.putWaiver.run(w.id, w.createdAt, JSON.stringify(w));
    this.writes++;
  }

  async listWaivers(): Promise<WaiverRow[]> {
    return (this.s.listWaivers.all() as { row: string }[]).map((r) => JSON.parse(r.row));
  }

  async getWaiver(id: string): Promise<WaiverRow | null> {
    const r = this.s.getWaiver.get(id) as { row: string } | undefined;
    return r ? JSON.parse(r.row) : null;
  }

  /** Own writes and `PRAGMA data_version` (moves when `hub waiver` in another process commits). */
  async stamp(): Promise<string> {
    return `${this.writes}:${this.db.pragma('data_version', { simple: true })}`;
  }

  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    return fn();
  }

  async close(): Promise<void> {
    this.db.close();
  }
}
