import type { ClockEstimate, Receipt } from '@driftline/protocol';
import type { CustodyStats, UplinkCustody } from '../ports/Custody.js';
import { budgetLeft } from './contactPlan.js';
import {
  type BackoffOptions,
  slotFailed,
  slotState,
  slotSucceeded,
  type UpstreamSlot,
} from './upstreamSlot.js';

export type { UpstreamSlot } from './upstreamSlot.js';

export interface ForwarderOptions extends BackoffOptions {
  batchBytes: number;
  batchCount: number;
  /** Longest sleep when idle or waiting, so new work and clock changes are noticed. */
  idleMs: number;
}

/**
 * What happened, for metrics and logs (the forwarder itself does no I/O but through its ports).
 * `failed` with `retryable: false` will fail the same way until someone fixes the cause (a token, a size
 * limit upstream): custody keeps the bundles and backs off as for any failure, and says so loudly.
 */
export type ForwardEvent =
  | { type: 'forwarded'; upstream: string; count: number; bytes: number }
  | { type: 'blob-forwarded'; upstream: string; sha256: string; bytes: number }
  | {
      type: 'blob-set-aside';
      upstream: string;
      sha256: string;
      code: string;
      reason: string;
      retryAt: number;
    }
  | {
      type: 'refused';
      upstream: string;
      receipts: Receipt[];
      /** The `site/agent` of each refused bundle, when custody knows it (same order as `receipts`). */
      sources: (string | null)[];
    }
  | { type: 'blob-lost'; upstream: string; sha256: string; reason: string }
  | { type: 'failed'; upstream: string; code: string; reason: string; retryable: boolean; retryInMs: number }
  | { type: 'expired'; direction: 'uplink' | 'downlink'; id: string; dest: string; priority: string };

/**
 * Each source's clock minus this relay's, for the sources of a batch that came with an estimate; of two
 * bundles of one source, the estimate with the least uncertainty.
 */
export function sourceClocks(
  batch: readonly { source?: string | null; clock?: ClockEstimate | null }[],
): Map<string, ClockEstimate> {
  const out = new Map<string, ClockEstimate>();
  for (const b of batch) {
    if (!b.source || !b.clock) continue;
    const had = out.get(b.source);
    if (!had || b.clock.uncertaintyMs < had.uncertaintyMs) out.set(b.source, b.clock);
  }
  return out;
}

/**
 * One forwarding step: expire what outlived its lifetime, take the most urgent batch (priority
 * order from custody), and hand it to the first upstream that is out of backoff, inside a contact
 * window and within its byte budget. Bundles leave custody only after the upstream's receipts say
 * `stored` or `duplicate` (custody passes on, D1). Returns how long to wait before the next step.
 */
export async function forwardStep(
  custody: UplinkCustody & Pick<CustodyStats, 'sent' | 'addSent'>,
  slots: UpstreamSlot[],
  opts: ForwarderOptions,
  now: () => number,
  random: () => number,
  emit: (e: ForwardEvent) => void,
): Promise<{ sent: number; waitMs: number }> {
  const t = now();
  const expired = custody.expire(t);
  for (const e of expired.uplink) emit({ type: 'expired', direction: 'uplink', ...e });
  for (const e of expired.downlink) emit({ type: 'expired', direction: 'downlink', ...e });

  let wait = opts.idleMs;
  const states = slots.map((s) => slotState(s, t));
  // When the next not-ready upstream wakes (its backoff ends or its window opens).
  const wakeAt = Math.min(
    ...states.map((c) => (!c.ready && c.wakeAt !== null ? c.wakeAt : Number.POSITIVE_INFINITY)),
  );
  // A step runs on every request taken in: while every upstream backs off or waits for its window, the
  // batch is not read at all (reading ~1 MiB of bundles per request only to drop it made garbage faster
  // than V8 collected it).
  if (!states.some((c) => c.ready)) return { sent: 0, waitMs: Math.max(0, Math.min(wait, wakeAt - t)) };
  const first = custody.nextBatch(t, opts.batchBytes, opts.batchCount);
  if (first.length === 0) return { sent: 0, waitMs: wait };
  wait = Math.min(wait, wakeAt - t);
  for (const [i, slot] of slots.entries()) {
    const c = states[i] as (typeof states)[number];
    if (!c.ready) continue;
    const keys = [`${slot.upstream.name}|w|${c.windowKey}`, `${slot.upstream.name}|d|${c.dayKey}`];
    const left = budgetLeft(slot.plan, custody.sent(keys[0] as string), custody.sent(keys[1] as string));
    const batch: typeof first = [];
    let size = 0;
    for (const b of first) {
      if (size + b.size > left) break;
      size += b.size;
      batch.push(b);
    }
    if (batch.length === 0) continue; // budget spent: wait for the next window or day
    const r = await slot.upstream.postBatch(
      batch.map((b) => b.bytes),
      sourceClocks(batch),
    );
    if (!r.ok) {
      const delay = slotFailed(slot, now(), opts, random);
      wait = Math.min(wait, delay);
      const { code, message: reason, retryable } = r;
      emit({ type: 'failed', upstream: slot.upstream.name, code, reason, retryable, retryInMs: delay });
      continue;
    }
    slotSucceeded(slot);
    custody.addSent(keys, r.bytes);
    // By seq: two candidates of one id (an altered copy and the genuine one) are separate rows.
    const done: number[] = [];
    const refusedSeqs: number[] = [];
    const refused: Receipt[] = [];
    const sources: (string | null)[] = [];
    r.receipts.forEach((rc, i) => {
      const b = batch[i] as (typeof batch)[number];
      if (rc.status === 'rejected') {
        refused.push({ ...rc, bundleId: rc.bundleId ?? (b.id as Receipt['bundleId']) });
        sources.push(b.source ?? null);
        refusedSeqs.push(b.seq);
      } else done.push(b.seq);
    });
    custody.forwarded(done);
    if (refused.length > 0) {
      custody.refused(refusedSeqs);
      emit({ type: 'refused', upstream: slot.upstream.name, receipts: refused, sources });
    }
    emit({ type: 'forwarded', upstream: slot.upstream.name, count: done.length, bytes: r.bytes });
    return { sent: batch.length, waitMs: 0 };
  }
  return { sent: 0, waitMs: Math.max(0, wait) };
}
