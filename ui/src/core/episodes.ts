import { FAILURE_STATUSES, type RunListItem } from '@driftline/protocol';

/**
 * A drift episode of one cell: from the first run that found drift to the last one, and the first later
 * run that found none (resolved), if any. Failed, locked and blocked runs say nothing about drift and
 * neither end nor extend an episode.
 */
export interface DriftEpisode {
  firstSeen: string;
  lastSeen: string;
  /** When a run first found no drift again; null while the drift lasts (as far as the runs read show). */
  resolvedAt: string | null;
  /** Runs that found the drift, and the most resources drifted in any of them. */
  runs: number;
  maxDrift: number;
  firstRunId: string;
  /** When the first drifted run reached the hub: the matrix as known then shows the drift. */
  firstReceivedAt: string;
}

/** Runs that say nothing about drift: failures, and plans that could not run. */
const SILENT = new Set<string>([...FAILURE_STATUSES, 'blocked']);

const driftOf = (r: RunListItem): number => {
  if (r.status === 'drift') return Math.max(1, r.counts?.drift ?? 0);
  return r.counts?.drift ?? 0;
};

/** Drift episodes from runs in any order, newest episode first. */
export function driftEpisodes(runs: readonly RunListItem[]): DriftEpisode[] {
  const oldestFirst = [...runs].sort((a, b) =>
    a.plannedAt < b.plannedAt ? -1 : a.plannedAt > b.plannedAt ? 1 : 0,
  );
  const out: DriftEpisode[] = [];
  let open: DriftEpisode | null = null;
  for (const r of oldestFirst) {
    if (SILENT.has(r.status)) continue;
    const d = driftOf(r);
    if (d > 0) {
      if (!open) {
        open = {
          firstSeen: r.plannedAt,
          lastSeen: r.plannedAt,
          resolvedAt: null,
          runs: 0,
          maxDrift: 0,
          firstRunId: r.runId,
          firstReceivedAt: r.receivedAt,
        };
        out.push(open);
      }
      open.lastSeen = r.plannedAt;
      open.runs++;
      open.maxDrift = Math.max(open.maxDrift, d);
    } else if (open) {
      open.resolvedAt = r.plannedAt;
      open = null;
    }
  }
  return out.reverse();
}

/** Runs oldest first, at most `max` of the newest: the cell's status strip. */
export function timeline(runs: readonly RunListItem[], max = 60): RunListItem[] {
  return [...runs]
    .sort((a, b) => (a.plannedAt < b.plannedAt ? 1 : a.plannedAt > b.plannedAt ? -1 : 0))
    .slice(0, max)
    .reverse();
}
