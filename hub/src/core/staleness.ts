/**
 * When a cell's plan goes stale: the one place the rule lives (docs/decisions/400-fleet-read-model.md),
 * so the read model's deadline column, the sweeper and every view agree, and the rule can move into
 * `protocol` by changing this file alone.
 */

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
  if (c.expectedIntervalS === null || !(c.expectedIntervalS > 0)) return null;
  return c.plannedAt + 2 * c.expectedIntervalS * 1000;
}

/** Stale at `now`: past the deadline. */
export function isStaleAt(c: StaleInput, now: number): boolean {
  const d = staleDeadline(c);
  return d !== null && now > d;
}
