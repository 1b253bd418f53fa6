import { backoffDelay } from '@driftline/hop/timing';
import type { Upstream } from '../ports/Upstream.js';
import { type ContactPlan, contactState } from './contactPlan.js';

/**
 * An upstream with its contact plan and retry state. Failover goes down the list in order. Bundles,
 * blobs, downlink pulls and bundle fetches all go through the same slot: one backoff per upstream.
 */
export interface UpstreamSlot {
  upstream: Upstream;
  plan: ContactPlan;
  failures: number;
  retryAt: number;
}

/** How long a slot backs off: `backoffBaseMs` doubling (full jitter) up to `backoffMaxMs`. */
export interface BackoffOptions {
  backoffBaseMs: number;
  backoffMaxMs: number;
}

/** Whether the slot may be used at `t`; if not, when to look again (null: no window ahead). */
export type SlotState =
  | { ready: true; windowKey: string; dayKey: string; closesAt?: number }
  | { ready: false; wakeAt: number | null };

/** The one rule for "may this upstream be used now": out of backoff and inside a contact window. */
export function slotState(slot: Pick<UpstreamSlot, 'retryAt' | 'plan'>, t: number): SlotState {
  if (slot.retryAt > t) return { ready: false, wakeAt: slot.retryAt };
  const c = contactState(slot.plan, t);
  return c.open
    ? {
        ready: true,
        windowKey: c.windowKey,
        dayKey: c.dayKey,
        ...(c.closesAt === undefined ? {} : { closesAt: c.closesAt }),
      }
    : { ready: false, wakeAt: c.opensAt };
}

/** The first slot ready at `t`, in list order (failover). */
export const firstReady = <S extends Pick<UpstreamSlot, 'retryAt' | 'plan'>>(
  slots: readonly S[],
  t: number,
) => slots.find((s) => slotState(s, t).ready);

/** Records a failure: the slot backs off. Answers the delay. */
export function slotFailed(
  slot: UpstreamSlot,
  now: number,
  opts: BackoffOptions,
  random: () => number,
): number {
  slot.failures++;
  const delay = backoffDelay(slot.failures, opts.backoffBaseMs, opts.backoffMaxMs, random);
  slot.retryAt = now + delay;
  return delay;
}

/** Records a success: the backoff starts over. */
export function slotSucceeded(slot: UpstreamSlot): void {
  slot.failures = 0;
  slot.retryAt = 0;
}
