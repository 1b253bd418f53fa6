import { type ClockEstimate, DRIFT_PER_MS } from '@driftline/protocol';
import type { HeldClock, HeldReason } from '../ports/HubStore.js';
import { nextOffset, OFFSET_WINDOW_MS, type OffsetEstimate } from './clockOffset.js';

export type { HeldClock, HeldReason } from '../ports/HubStore.js';

/** How long a jumped estimate must stand, unchallenged, before it replaces the agent's offset (a clock step). */
export const STEP_CONFIRM_MS = OFFSET_WINDOW_MS;
/** Samples a held jump needs, besides its age, before it is taken. */
export const STEP_CONFIRM_SAMPLES = 3;

/** What the hub keeps per agent to bound its clock: the offset estimate, a held one, the newest bundle. */
export interface AgentClock {
  est: OffsetEstimate;
  held: HeldClock | null;
  /** `created` of the newest bundle taken from the agent (agent clock), and that time on the hub clock. */
  lastCreated: number | null;
  lastCreatedAt: number | null;
}

export interface BundleTiming {
  /** The bundle's signed creation time, agent clock. */
  created: number;
  /** Hub time it arrived. */
  receivedAt: number;
  /** The estimate its path composed (070), if any. */
  estimate?: ClockEstimate | null;
  /** The peer it came through. */
  via: string;
  /** Whether it brought changes the hub did not have (a delta is cumulative since the last ack). */
  changed: boolean;
  /**
   * False when the estimate came through a hop that vouches for nothing: a relay enrolled without a key
   * (`hub peer add --no-key`). Such a claim is checked against the agent's own bound but never narrows
   * it (docs/decisions/415-unkeyed-relays.md). Default true.
   */
  attested?: boolean;
  /**
   * The least `receivedAt − requestedAt` of the hub's plan requests the agent's document says it
   * received (agent clock minus hub clock): the agent received each after the hub made it, so its offset
   * is at most this, whatever any hop says. Null or absent: none in this batch.
   */
  upperMs?: number | null;
}

export interface ClockVerdict {
  next: AgentClock;
  /** Fresh: made after the newest bundle the hub took from the agent, or bringing new changes. */
  fresh: boolean;
  /** Set when this bundle's path estimate was held back (counted and logged by the caller). */
  held: HeldReason | null;
}

/**
 * The agent's clock after one of its bundles, with every path estimate bounded by what no hop can forge
 * (docs/decisions/230-time-a-hop-cannot-forge.md):
 *
 * - a bundle is not made after the hub received it (`offset ≥ created − receivedAt`, in `nextOffset`);
 * - a fresh bundle is not made before the newest one the hub took from the agent
 *   (`offset ≤ created − lastCreatedAt + u`, u the uncertainty that time was read with);
 * - an estimate that leaves the current one's interval (aged at 15 ppm) is a jump: held back and
 *   flagged, the current offset stays. A jump that transit alone proves (the current offset would put
 *   the bundle after its arrival) is taken at once; one that stands unchallenged for
 *   {@link STEP_CONFIRM_MS} over {@link STEP_CONFIRM_SAMPLES} samples is a clock step and is taken then.
 *
 * - the agent received each plan request it confirms after the hub made it (`upperMs`);
 * - a claim that came through a relay enrolled without a key (`attested: false`) is checked against these
 *   bounds (a lie beyond them is held as `contradicts-bounds`) but never narrows them: the estimate is the
 *   agent's own bound (docs/decisions/415-unkeyed-relays.md).
 *
 * A stale bundle (neither newer than the newest nor bringing changes: a replay) changes nothing.
 */
export function guardClock(prev: AgentClock, t: BundleTiming): ClockVerdict {
  const fresh = prev.lastCreated === null || t.created > prev.lastCreated || t.changed;
  if (!fresh) return { next: prev, fresh, held: null };
  const e = t.estimate ?? null;
  let est: OffsetEstimate = prev.est;
  let held: HeldClock | null = prev.held;
  let flag: HeldReason | null = null;
  const transitLo = t.created - t.receivedAt;
  // The agent's own bound, from what no hop can forge: made before it arrived (transitLo), not before the
  // newest bundle taken (only when that time was read from a round trip), received after the hub made
  // each request it confirms (upperMs).
  let ownHi = t.upperMs ?? Number.POSITIVE_INFINITY;
  const prevU = prev.est.uncertaintyMs;
  if (
    prev.lastCreated !== null &&
    prev.lastCreatedAt !== null &&
    prevU != null &&
    t.created >= prev.lastCreated
  )
    ownHi = Math.min(ownHi, t.created - prev.lastCreatedAt + prevU);
  if (e) {
    let lo = Math.max(e.offsetMs - e.uncertaintyMs, transitLo);
    const hi = Math.min(e.offsetMs + e.uncertaintyMs, ownHi);
    if (lo > hi) {
      flag = 'contradicts-bounds';
      held = holdRecord(null, 'contradicts-bounds', e, t);
      // A round-trip estimate stands however old it is: the one-way fallback would be worse than it.
      est = prev.est.uncertaintyMs != null ? prev.est : nextOffset(prev.est, t.created, t.receivedAt, null);
    } else {
      lo = Math.max(lo, transitLo);
      const cut: ClockEstimate = {
        offsetMs: Math.round((lo + hi) / 2),
        uncertaintyMs: Math.ceil((hi - lo) / 2),
        ...(e.trusted && lo === 0 && hi === 0 ? { trusted: true } : {}),
      };
      // What the estimate may become: the claim within the bounds, or, from a hop that vouches for
      // nothing, the agent's own bound (its middle, half its width; the one-way bound while it has no
      // upper end): such a claim is checked (here and for a jump) but never narrows anything.
      const taken: ClockEstimate | null =
        t.attested !== false
          ? cut
          : Number.isFinite(ownHi)
            ? {
                offsetMs: Math.round((transitLo + ownHi) / 2),
                uncertaintyMs: Math.ceil((ownHi - transitLo) / 2),
              }
            : null;
      const jumped = jumpFrom(prev.est, cut, t.receivedAt);
      const provenByTransit =
        prev.est.offsetMs !== null && transitLo > prev.est.offsetMs + aged(prev.est, t.receivedAt);
      if (!jumped || provenByTransit) {
        est = nextOffset(prev.est, t.created, t.receivedAt, taken);
        held = null;
      } else {
        const h = holdRecord(held, 'jump', cut, t);
        if (h.samples >= STEP_CONFIRM_SAMPLES && t.receivedAt - h.since >= STEP_CONFIRM_MS) {
          est = taken
            ? { offsetMs: taken.offsetMs, uncertaintyMs: taken.uncertaintyMs, sampledAt: t.receivedAt }
            : nextOffset(
                { offsetMs: null, uncertaintyMs: null, sampledAt: null },
                t.created,
                t.receivedAt,
                null,
              );
          held = null;
        } else {
          flag = 'jump';
          held = h;
        }
      }
    }
  } else {
    est = nextOffset(prev.est, t.created, t.receivedAt, null);
  }
  const at = est.offsetMs === null ? t.receivedAt : Math.min(t.created - est.offsetMs, t.receivedAt);
  const newest = prev.lastCreated === null || t.created >= prev.lastCreated;
  return {
    next: {
      est,
      held,
      lastCreated: newest ? t.created : prev.lastCreated,
      lastCreatedAt: newest ? at : prev.lastCreatedAt,
    },
    fresh,
    held: flag,
  };
}

/** The current estimate's uncertainty grown with its age (NTP's PHI, 15 ppm); Infinity for a one-way bound. */
function aged(cur: OffsetEstimate, at: number): number {
  if (cur.uncertaintyMs == null) return Number.POSITIVE_INFINITY;
  return cur.uncertaintyMs + Math.max(0, at - (cur.sampledAt ?? at)) * DRIFT_PER_MS;
}

/** Whether `e` cannot hold together with the current round-trip estimate. */
function jumpFrom(cur: OffsetEstimate, e: ClockEstimate, at: number): boolean {
  if (cur.offsetMs === null || cur.uncertaintyMs == null) return false;
  return Math.abs(e.offsetMs - cur.offsetMs) > e.uncertaintyMs + aged(cur, at);
}

/** The held record after one more held estimate: a run of agreeing jumps counts up, anything else starts over. */
function holdRecord(h: HeldClock | null, reason: HeldReason, e: ClockEstimate, t: BundleTiming): HeldClock {
  const agrees =
    h !== null &&
    h.reason === reason &&
    reason === 'jump' &&
    Math.abs(h.offsetMs - e.offsetMs) <= h.uncertaintyMs + e.uncertaintyMs;
  return {
    reason,
    offsetMs: e.offsetMs,
    uncertaintyMs: e.uncertaintyMs,
    since: agrees ? h.since : t.receivedAt,
    lastAt: t.receivedAt,
    samples: agrees ? h.samples + 1 : 1,
    via: t.via,
  };
}
