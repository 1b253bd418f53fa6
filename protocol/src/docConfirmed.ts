import { z } from 'zod';

/**
 * An unchanged re-plan, written apart from its cell (docs/decisions/330-unchanged-replan-heartbeat.md):
 * `confirmed[cellKey]` in the agent document holds the canonical JSON of this value, one scalar string,
 * instead of the whole packed cell being written again. The cell (`cells[cellKey]`) keeps the run that
 * produced the plan; this entry says the last run that found the same plan finished at `at`, that `n`
 * runs in a row did since the cell was written, and which commit the last of them planned when it was
 * not the cell's. An agent writes it only once its hub says it reads it (`AckPayload.readsConfirmed`);
 * a cell written again (a changed plan) removes it.
 */
export const DocConfirmedSchema = z.strictObject({
  /** When the latest confirming plan finished at the site (agent clock, ms). */
  at: z.number().int().nonnegative(),
  /** Confirmations since the cell entry was written (added to its `confirmations`). */
  n: z.number().int().positive().max(1_000_000_000),
  /** The commit the latest confirming plan planned, when it differs from the cell's. */
  commit: z.string().max(64).optional(),
});
export type DocConfirmed = z.infer<typeof DocConfirmedSchema>;

/** Longest `confirmed` entry a reader parses (a valid one is under 120 characters): an agent is untrusted. */
export const MAX_CONFIRMED_CHARS = 200;

/** A `confirmed` entry as plain data, whichever way it was read, or null when it is not a valid one. */
export function readConfirmed(value: unknown): DocConfirmed | null {
  const text =
    typeof value === 'string'
      ? value
      : value !== null && typeof value === 'object' && typeof (value as { val?: unknown }).val === 'string'
        ? (value as { val: string }).val
        : null;
  if (text === null || text.length > MAX_CONFIRMED_CHARS) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return null;
  }
  const r = DocConfirmedSchema.safeParse(parsed);
  return r.success ? r.data : null;
}

/**
 * The cell as a reader sees it once its `confirmed` entry is applied: what a confirmation written into
 * the cell itself would have made of it (plannedAt moves, `unchangedSince` stays where the plan was first
 * found, confirmations add up, the last commit planned). An entry not newer than the cell, an invalid
 * one, or a cell that is not an object leaves the cell as it is (the schema then judges the cell).
 */
export function overlayConfirmed(cell: unknown, confirmed: unknown): unknown {
  if (confirmed === undefined || cell === null || typeof cell !== 'object' || Array.isArray(cell))
    return cell;
  const c = readConfirmed(confirmed);
  const base = cell as { plannedAt?: unknown; unchangedSince?: unknown; confirmations?: unknown };
  if (!c || typeof base.plannedAt !== 'number' || c.at < base.plannedAt) return cell;
  return {
    ...base,
    unchangedSince: typeof base.unchangedSince === 'number' ? base.unchangedSince : base.plannedAt,
    plannedAt: c.at,
    confirmations: (typeof base.confirmations === 'number' ? base.confirmations : 0) + c.n,
    ...(c.commit ? { commit: c.commit } : {}),
  };
}
