import type { PlanRequestRow } from '../ports/HubStore.js';

/**
 * Whether a pull's mark of a plan request is still news against the stored row (`markDelivered`): a
 * request moves only while it is `pending` (another hub's pull, or an ingest that answered it, may have
 * moved it first); a mark that it is at a relay (decision 560) only where no relay was marked before, so
 * the time is the first pull's.
 */
export function pullMoves(stored: PlanRequestRow | null | undefined, mark: PlanRequestRow): boolean {
  if (stored?.state !== 'pending') return false;
  return mark.state === 'delivered' || stored.relayAt == null;
}
