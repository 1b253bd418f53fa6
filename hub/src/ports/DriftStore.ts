import type { EpisodeKind } from '@driftline/protocol';
import type { EpisodeRow } from '../core/drift/episodes.js';
import type { WaiverRow } from '../core/drift/waivers.js';

/** What `/api/drift` filters by (exact values). */
export interface EpisodeFilter {
  site?: string;
  environment?: string;
  component?: string;
  address?: string;
  type?: string;
  kind?: EpisodeKind;
  state?: 'open' | 'resolved';
  signature?: string;
}

/** The newest run a cell's episodes were advanced by (runs older than it are not replayed). */
export interface CellMark {
  site: string;
  environment: string;
  component: string;
  plannedAt: number;
}

/** A cell, as `cellsState` is asked and answers (`cellKey`). */
export interface CellKey {
  site: string;
  environment: string;
  component: string;
}
export const cellKey = (c: CellKey): string => `${c.site}\u0000${c.environment}\u0000${c.component}`;

/** The marks and open episodes (each cell's oldest first) of the cells asked, by `cellKey`. */
export interface CellsState {
  marks: Map<string, number>;
  open: Map<string, EpisodeRow[]>;
}

/**
 * Drift episodes and waivers (decision 421), apart from the hub store so the matrix's store stays as it
 * is. Contract: `hub/test/driftStoreContract.ts`.
 */
export interface DriftStore {
  /** The cell's open episodes. */
  openOf(site: string, environment: string, component: string): Promise<EpisodeRow[]>;
  markOf(site: string, environment: string, component: string): Promise<number | null>;
  /** `markOf` and `openOf` of many cells in one read: what `Drift.observe` asks once per batch. */
  cellsState(cells: readonly CellKey[]): Promise<CellsState>;
  /** One transaction: episodes upserted by id, and the cells' marks. */
  record(w: { episodes: readonly EpisodeRow[]; marks: readonly CellMark[] }): Promise<void>;
  /** Episodes, newest first, with a sequence to page by (`before`: exclusive), at most `limit`. */
  list(f: EpisodeFilter, limit: number, before?: number): Promise<{ seq: number; row: EpisodeRow }[]>;
  /** Every open episode (groups, the cells' waived marks and the gauges read these). */
  listOpen(): Promise<EpisodeRow[]>;
  get(id: string): Promise<EpisodeRow | null>;
  putWaiver(w: WaiverRow): Promise<void>;
  listWaivers(): Promise<WaiverRow[]>;
  getWaiver(id: string): Promise<WaiverRow | null>;
  /**
   * A value that differs after any write by anyone (this hub, `hub waiver` in another process, another
   * hub on the same database): what `Drift` compares before it trusts its cached open episodes and waivers.
   */
  stamp(): Promise<string>;
  /**
   * Runs `fn` (reads, then `record`) while no other hub on the same store runs one, so two hubs never
   * both open an episode for the same drift. On PostgreSQL an advisory lock across hubs (decision 470);
   * in one process `Drift` already runs one batch at a time, so the file and memory stores just run it.
   */
  exclusive<T>(fn: () => Promise<T>): Promise<T>;
  close(): Promise<void>;
}
