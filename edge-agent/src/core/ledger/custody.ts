import * as A from '@automerge/automerge';
import type { AgentWriteSet, EpochRow, RunStorage, SyncStorage } from '../../ports/AgentStorage.js';
import type { SatRecord } from '../../ports/Ledger.js';

/**
 * Custody deadlines (docs/decisions/575-custody-deadline-per-path.md). Each receipt that counts as custody
 * is kept, per epoch, until a hub ack covers its heads; the time it took is that upstream's delivery time.
 * A receipt held past its upstream's deadline makes the next push carry everything since the hub's ack,
 * to an upstream that has not sat on it (`sitters`), and records the upstream that sat. Kept in the
 * store's meta rows (small JSON values), so an agent store of an earlier release opens unchanged.
 */

/** A receipt an upstream gave for a push of an epoch, its heads not covered by a hub ack yet. */
export interface HeldReceipt {
  heads: string[];
  at: number;
  by: string;
}

export interface CustodyOptions {
  /** Deadline of an upstream when no upstream has delivered anything yet (`sync.custodyDeadlineS`). */
  fallbackMs: number;
  /** The longest deadline, and how long an upstream that sat is passed over (`sync.resendAfterS`). */
  resendAfterMs: number;
}

const HELD = 'custody:';
const DELIVERY = 'delivery:';
const SAT = 'custody_sat:';
/** Receipts kept per epoch: past it the oldest two merge (the older time kept: a deadline never later). */
const MAX_HELD = 32;
/** Delivery times kept per upstream. */
const MAX_SAMPLES = 8;
/** No deadline is shorter: a pull or two of the ack's way back. */
const MIN_DEADLINE_MS = 60_000;

function json<T>(text: string | undefined, ok: (v: unknown) => v is T): T | null {
  if (text === undefined || text === '') return null;
  try {
    const v: unknown = JSON.parse(text);
    return ok(v) ? v : null;
  } catch {
    return null;
  }
}

const isHeldList = (v: unknown): v is HeldReceipt[] =>
  Array.isArray(v) &&
  v.every((x) => x && typeof x.at === 'number' && typeof x.by === 'string' && Array.isArray(x.heads));
const isNumbers = (v: unknown): v is number[] => Array.isArray(v) && v.every((x) => typeof x === 'number');
const isSat = (v: unknown): v is SatRecord =>
  !!v && typeof v === 'object' && typeof (v as SatRecord).since === 'number';

export const heldReceipts = (s: SyncStorage, epoch: number): HeldReceipt[] =>
  json(s.meta(`${HELD}${epoch}`), isHeldList) ?? [];

const deliveries = (s: SyncStorage, url: string): number[] =>
  json(s.meta(`${DELIVERY}${url}`), isNumbers) ?? [];

/**
 * How long `url` may hold custody before what it holds goes again by another way: 1.5× the longest of
 * its recent delivery times plus a minute, or of any upstream's when it delivered nothing yet (the
 * site's honest path), else `fallbackMs`; never under a minute nor over `resendAfterMs`.
 */
export function deadlineMs(s: SyncStorage, url: string, o: CustodyOptions): number {
  let known = deliveries(s, url);
  if (known.length === 0) known = s.upstreams().flatMap((u) => deliveries(s, u.url));
  const expected = known.length > 0 ? Math.max(...known) * 1.5 + MIN_DEADLINE_MS : o.fallbackMs;
  return Math.min(o.resendAfterMs, Math.max(MIN_DEADLINE_MS, expected));
}

/**
 * `deadlineMs` per upstream, each computed once: a loop over an epoch's receipts (up to 32, mostly one
 * upstream's) reads the delivery times once, not once per receipt.
 */
function deadlines(s: SyncStorage, o: CustodyOptions): (url: string) => number {
  const known = new Map<string, number>();
  return (url) => {
    let d = known.get(url);
    if (d === undefined) {
      d = deadlineMs(s, url, o);
      known.set(url, d);
    }
    return d;
  };
}

/** The receipt of `e` held past its upstream's deadline (the oldest such), or null. */
export function overdueCustody(
  s: SyncStorage,
  e: EpochRow,
  now: number,
  o: CustodyOptions,
): (HeldReceipt & { deadlineMs: number }) | null {
  const deadline = deadlines(s, o);
  for (const r of heldReceipts(s, e.epoch)) {
    const d = deadline(r.by);
    if (now - r.at >= d) return { ...r, deadlineMs: d };
  }
  return null;
}

/** The upstreams that sat on custody and are passed over for now (pushed to only when no other answers). */
export function sitters(s: SyncStorage, now: number, o: CustodyOptions): SatRecord[] {
  return s
    .upstreams()
    .map((u) => json(s.meta(`${SAT}${u.url}`), isSat))
    .filter((r): r is SatRecord => r !== null && now - r.since < o.resendAfterMs);
}

/**
 * Adds to `w` a custody receipt of a push of `epoch` by `by`. `fromAck`: the push carried everything since
 * the hub's ack, so it covers every receipt held before: those are let go, and each one held past its
 * deadline records its upstream as having sat on it.
 */
export function custodyReceiptWrites(
  w: AgentWriteSet,
  s: SyncStorage & RunStorage,
  p: { epoch: number; heads: string[]; by: string; fromAck: boolean },
  now: number,
  o: CustodyOptions,
): void {
  let held = heldReceipts(s, p.epoch);
  if (p.fromAck) {
    const meta: Record<string, string> = {};
    const deadline = deadlines(s, o);
    for (const r of held) {
      if (now - r.at < deadline(r.by)) continue;
      const key = `${SAT}${r.by}`;
      const counted = meta[key] !== undefined;
      const prev = json(meta[key] ?? s.meta(key), isSat);
      const episode = prev && now - prev.since < o.resendAfterMs ? prev : null;
      const rec: SatRecord = {
        upstream: r.by,
        since: episode?.since ?? now,
        results: s.unackedRuns(p.epoch).length,
        oldestAt: Math.min(episode?.oldestAt ?? r.at, r.at),
        // several receipts it sat on, sent again in this one push: one resend
        resends: (episode?.resends ?? 0) + (counted ? 0 : 1),
      };
      meta[key] = JSON.stringify(rec);
    }
    w.meta = { ...w.meta, ...meta };
    held = [];
  }
  held.push({ heads: [...p.heads], at: now, by: p.by });
  while (held.length > MAX_HELD) {
    const [a, b] = held as [HeldReceipt, HeldReceipt];
    held.splice(0, 2, { ...b, at: a.at });
  }
  w.meta = { ...w.meta, [`${HELD}${p.epoch}`]: JSON.stringify(held) };
}

/**
 * Adds to `w` what a hub ack of `epoch` at `ackHeads` does to custody: each receipt whose heads it covers
 * is let go, its time to the ack counted as its upstream's delivery, and that upstream, having delivered,
 * no longer counts as sitting.
 */
export function custodyAckWrites(
  w: AgentWriteSet,
  s: SyncStorage,
  epoch: number,
  doc: A.Doc<unknown>,
  ackHeads: string[],
  now: number,
): void {
  const held = heldReceipts(s, epoch);
  if (held.length === 0) return;
  const after = new Set(A.getChangesMetaSince(doc, ackHeads).map((c) => c.hash));
  const kept: HeldReceipt[] = [];
  const meta: Record<string, string> = {};
  for (const r of held) {
    if (r.heads.some((h) => after.has(h))) {
      kept.push(r);
      continue;
    }
    const key = `${DELIVERY}${r.by}`;
    const samples = [...(json(meta[key] ?? s.meta(key), isNumbers) ?? []), Math.max(0, now - r.at)];
    meta[key] = JSON.stringify(samples.slice(-MAX_SAMPLES));
    if (s.meta(`${SAT}${r.by}`)) meta[`${SAT}${r.by}`] = '';
  }
  if (kept.length === held.length) return;
  meta[`${HELD}${epoch}`] = JSON.stringify(kept);
  w.meta = { ...w.meta, ...meta };
}
