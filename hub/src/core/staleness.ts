/**
 * When a cell's plan goes stale, as the read model's deadline column and the sweeper read it
 * (docs/decisions/400-fleet-read-model.md): protocol's rule (`staleAt`, the one definition of the
 * threshold, shared with the dashboard) over a cell's row.
 */
import { staleAt } from '@driftline/protocol';

/** What the rule reads of a cell. */
export interface StaleInput {
  /** When the plan ran at the site, on the hub clock (ms). */
  plannedAt: number;
  /** The cadence the agent declared for the cell (s); null or 0: never stale. */
  expectedIntervalS: number | null;
}

/**
 * The hub time (ms) after which the cell is stale: its plan is older than twice the declared cadence.
 * Null: the cell never goes stale on time alone.
 */
export function staleDeadline(c: StaleInput): number | null {
  return staleAt(c.plannedAt, c.expectedIntervalS);
}
