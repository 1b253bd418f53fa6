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

const cell = (site: string, environment: string, component: string) =>
  `${site}\u0000${environment}\u0000${component}`;

/** DriftStore in memory, for tests and a hub without a data directory. */
export class MemoryDriftStore implements DriftStore {
  private seq = 0;
  private writes = 0;
  private readonly episodes = new Map<string, { seq: number; row: EpisodeRow }>();
  private readonly marks = new Map<string, number>();
  private readonly waivers = new Map<string, WaiverRow>();

  async openOf(site: string, environment: string, component: string): Promise<EpisodeRow[]> {
    const k = cell(site, environment, component);
    return [...this.episodes.values()]
      .filter((e) => e.row.state === 'open' && cell(e.row.site, e.row.environment, e.row.component) === k)
      .map((e) => structuredClone(e.row));
  }

  async markOf(site: string, environment: string, component: string): Promise<number | null> {
    return this.marks.get(cell(site, environment, component)) ?? null;
  }

  async cellsState(cells: readonly CellKey[]): Promise<CellsState> {
    const asked = new Set(cells.map(cellKey));
    const out: CellsState = { marks: new Map(), open: new Map() };
    for (const k of asked) {
      const m = this.marks.get(k);
      if (m !== undefined) out.marks.set(k, m);
    }
    const open = [...this.episodes.values()]
      .filter((e) => e.row.state === 'open' && asked.has(cellKey(e.row)))
      .sort((a, b) => a.seq - b.seq);
    for (const e of open) {
      const k = cellKey(e.row);
      out.open.set(k, [...(out.open.get(k) ?? []), structuredClone(e.row)]);
    }
    return out;
  }

  async record(w: { episodes: readonly EpisodeRow[]; marks: readonly CellMark[] }): Promise<void> {
    this.writes++;
    for (const e of w.episodes) {
      const prev = this.episodes.get(e.id);
      this.episodes.set(e.id, { seq: prev?.seq ?? ++this.seq, row: structuredClone(e) });
    }
    for (const m of w.marks) {
      const k = cell(m.site, m.environment, m.component);
      this.marks.set(k, Math.max(this.marks.get(k) ?? m.plannedAt, m.plannedAt));
    }
  }

  async list(f: EpisodeFilter, limit: number, before?: number): Promise<{ seq: number; row: EpisodeRow }[]> {
    return [...this.episodes.values()]
      .filter(
        (e) =>
          (before === undefined || e.seq < before) &&
          Object.entries(f).every(([k, v]) => v === undefined || e.row[k as keyof EpisodeFilter] === v),
      )
      .sort((a, b) => b.seq - a.seq)
      .slice(0, limit)
      .map((e) => structuredClone(e));
  }

  async listOpen(): Promise<EpisodeRow[]> {
    return [...this.episodes.values()]
      .filter((e) => e.row.state === 'open')
      .sort((a, b) => a.seq - b.seq)
      .map((e) => structuredClone(e.row));
  }

  async get(id: string): Promise<EpisodeRow | null> {
    const e = this.episodes.get(id);
    return e ? structuredClone(e.row) : null;
  }

  async putWaiver(w: WaiverRow): Promise<void> {
    this.writes++;
    this.waivers.set(w.id, structuredClone(w));
  }

  async listWaivers(): Promise<WaiverRow[]> {
    return [...this.waivers.values()]
      .sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1))
      .map((w) => structuredClone(w));
  }

  async getWaiver(id: string): Promise<WaiverRow | null> {
    const w = this.waivers.get(id);
    return w ? structuredClone(w) : null;
  }

  async stamp(): Promise<string> {
    return String(this.writes);
  }

  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    return fn();
  }

  async close(): Promise<void> {}
}
