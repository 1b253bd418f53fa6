import { PRIORITIES, type Priority } from '@driftline/protocol';
import {
  type AcceptOutcome,
  type Custody,
  checkQuota,
  type ExpiredReport,
  type IncomingBundle,
  OutOfSpace,
  type PeerQuota,
  type QueuedBundle,
  type StorageUsage,
} from '../../ports/Custody.js';
import { type CachedLookup, MemoryBlobs } from './MemoryBlobs.js';

/** Longest a bundle id is remembered for deduplication (as `SqliteCustody`'s `SEEN_MAX_MS`). */
const SEEN_MAX_MS = 45 * 86_400_000;
const DAY = 86_400_000;

interface Row extends QueuedBundle {
  sha256: string;
  rank: number;
  expiresAt: number;
  from: string;
}
interface DownRow {
  seq: number;
  id: string;
  site: string;
  rank: number;
  receivedAt: number;
  expiresAt: number;
  bytes: Uint8Array;
}

/** A content hash to tell copies apart (not cryptographic: memory only, for tests). */
function contentKey(bytes: Uint8Array): string {
  let h = 2166136261;
  for (const b of bytes) h = Math.imul(h ^ b, 16777619);
  return `${bytes.length}:${(h >>> 0).toString(16)}`;
}

/**
 * Custody in memory, for tests and as a model of the port: the same outcomes, order, counters and
 * quotas as `SqliteCustody` (both pass `runCustodyContract`). `maxBytes` caps the bundles and blobs
 * held; a write past it throws `OutOfSpace` with nothing written. Nothing survives the process.
 */
export class MemoryCustody implements Custody {
  readonly maxBytes: number | undefined;
  externalBytes: () => number = () => 0;
  private readonly seen = new Map<string, number>();
  private up: Row[] = [];
  private down: DownRow[] = [];
  /** Downlink copies taken, `site\nid` → contentKey → when forgotten (as `SqliteCustody`'s `downlink_seen`). */
  private readonly downSeen = new Map<string, Map<string, number>>();
  private readonly cursors = new Map<string, string>();
  private readonly sentBytes = new Map<string, number>();
  private readonly counters = new Map<string, number>();
  private seq = 0;
  private closed = false;
  readonly blobs: MemoryBlobs;

  constructor(opts: { maxBytes?: number; cached?: CachedLookup } = {}) {
    this.maxBytes = opts.maxBytes;
    this.blobs = new MemoryBlobs(
      opts.cached ?? (() => null),
      (extra) => this.fits(extra),
      (name, by) => this.count(name, by),
    );
  }

  /** Throws unless `extra` more bytes fit under `maxBytes`. */
  fits(extra: number): void {
    this.open();
    if (this.maxBytes !== undefined && this.usage().total + extra > this.maxBytes)
      throw new OutOfSpace('the relay store is full');
  }

  private open(): void {
    if (this.closed) throw new Error('custody is closed');
  }

  accept(from: string, items: readonly IncomingBundle[], now: number, quota?: PeerQuota): AcceptOutcome[] {
    this.open();
    const staged: Row[] = [];
    const seen = new Map<string, number>();
    const expiredOnArrival = { n: 0 };
    const out = items.map((b): AcceptOutcome => {
      if (b.dest !== 'hub')
        throw new Error(`custody takes only uplink bundles from peers, not for '${b.dest}'`);
      const sha = contentKey(b.bytes);
      const key = `${b.id}\n${sha}`;
      if (this.seen.has(key) || seen.has(key)) return 'duplicate';
      if (b.expiresAt <= now) {
        expiredOnArrival.n++;
        return 'expired';
      }
      seen.set(key, Math.min(b.expiresAt, now + SEEN_MAX_MS));
      staged.push({
        seq: 0,
        id: b.id,
        sha256: sha,
        dest: b.dest,
        priority: b.priority,
        rank: PRIORITIES.indexOf(b.priority),
        size: b.bytes.length,
        receivedAt: now,
        expiresAt: b.expiresAt,
        from,
        bytes: b.bytes,
        source: b.source ?? null,
        clock: b.clock ?? null,
      });
      return 'stored';
    });
    this.fits(staged.reduce((n, r) => n + r.size, 0));
    if (quota && staged.length > 0) {
      const h = this.held(from);
      checkQuota(
        from,
        { bundles: h.bundles + staged.length, bytes: h.bytes + staged.reduce((n, r) => n + r.size, 0) },
        quota,
      );
    }
    for (const [k, v] of seen) this.seen.set(k, v);
    for (const r of staged) this.up.push({ ...r, seq: ++this.seq });
    this.count('expired_on_arrival', expiredOnArrival.n);
    return out;
  }

  held(peer: string): { bundles: number; bytes: number } {
    const mine = this.up.filter((r) => r.from === peer);
    const bytes = mine.reduce((n, r) => n + r.size, 0) + this.blobs.peerBytes(peer);
    return { bundles: mine.length, bytes };
  }

  heldByPeer(): { peer: string; bundles: number; bytes: number }[] {
    const peers = new Set([...this.up.map((r) => r.from), ...this.blobs.peers()]);
    return [...peers].map((peer) => ({ peer, ...this.held(peer) }));
  }

  nextBatch(now: number, maxBytes: number, maxCount: number): QueuedBundle[] {
    this.open();
    const rows = this.up
      .filter((r) => r.expiresAt > now)
      .sort((a, b) => a.rank - b.rank || a.seq - b.seq)
      .slice(0, maxCount);
    const out: QueuedBundle[] = [];
    let total = 0;
    for (const r of rows) {
      if (out.length > 0 && total + r.size > maxBytes) break;
      total += r.size;
      const { sha256: _s, rank: _r, expiresAt: _e, from: _f, ...q } = r;
      out.push(q);
    }
    return out;
  }

  forwarded(seqs: readonly number[]): void {
    this.remove(seqs);
    this.count('forwarded', seqs.length);
  }

  refused(seqs: readonly number[]): void {
    this.remove(seqs);
    this.count('refused_upstream', seqs.length);
  }

  private remove(seqs: readonly number[]): void {
    this.open();
    const gone = new Set(seqs);
    this.up = this.up.filter((r) => !gone.has(r.seq));
  }

  expire(now: number): ExpiredReport {
    this.open();
    const report: ExpiredReport = {
      uplink: this.up
        .filter((r) => r.expiresAt <= now)
        .map((r) => ({ id: r.id, dest: r.dest, priority: r.priority })),
      downlink: this.down
        .filter((r) => r.expiresAt <= now)
        .map((r) => ({ id: r.id, dest: r.site, priority: PRIORITIES[r.rank] as Priority })),
    };
    this.up = this.up.filter((r) => r.expiresAt > now);
    this.down = this.down.filter((r) => r.expiresAt > now);
    this.count('expired_uplink', report.uplink.length);
    this.count('expired_downlink', report.downlink.length);
    // ids of expired bundles are kept a day longer: a late copy is then refused as expired, not re-queued
    for (const [k, exp] of this.seen) if (exp <= now - DAY) this.seen.delete(k);
    for (const [k, copies] of this.downSeen) {
      for (const [c, exp] of copies) if (exp <= now - DAY) copies.delete(c);
      if (copies.size === 0) this.downSeen.delete(k);
    }
    return report;
  }

  downlink(site: string, after: number, limit: number): { bundles: Uint8Array[]; cursor: number } {
    this.open();
    if (after > 0) this.down = this.down.filter((r) => r.site !== site || r.seq > after);
    const rows = this.down.filter((r) => r.site === site && r.seq > after).slice(0, limit);
    return { bundles: rows.map((r) => r.bytes), cursor: rows.at(-1)?.seq ?? after };
  }

  storeDownlink(
    upstream: string,
    site: string,
    items: readonly IncomingBundle[],
    cursor: string,
    now: number,
  ): { conflicts: string[] } {
    this.open();
    const fresh = items.filter((b) => b.expiresAt > now);
    const keys = new Set<string>();
    const add = fresh.filter((b) => {
      const k = `${b.id}\n${contentKey(b.bytes)}`;
      if (this.downSeen.get(`${site}\n${b.id}`)?.has(contentKey(b.bytes)) || keys.has(k)) return false;
      keys.add(k);
      return true;
    });
    this.fits(add.reduce((n, b) => n + b.bytes.length, 0));
    const conflicts: string[] = [];
    for (const b of add) {
      const copies = this.downSeen.get(`${site}\n${b.id}`) ?? new Map<string, number>();
      if (copies.size > 0) conflicts.push(b.id);
      copies.set(contentKey(b.bytes), Math.min(b.expiresAt, now + SEEN_MAX_MS));
      this.downSeen.set(`${site}\n${b.id}`, copies);
      this.down.push({
        seq: ++this.seq,
        id: b.id,
        site,
        rank: PRIORITIES.indexOf(b.priority),
        receivedAt: now,
        expiresAt: b.expiresAt,
        bytes: b.bytes,
      });
    }
    this.count('expired_on_arrival', items.length - fresh.length);
    this.count('downlink_conflicts', conflicts.length);
    this.cursors.set(`${upstream}\n${site}`, cursor);
    return { conflicts };
  }

  upstreamCursor(upstream: string, site: string): string | undefined {
    return this.cursors.get(`${upstream}\n${site}`);
  }

  addSent(keys: readonly string[], bytes: number): void {
    for (const k of keys) this.sentBytes.set(k, (this.sentBytes.get(k) ?? 0) + bytes);
  }

  sent(key: string): number {
    return this.sentBytes.get(key) ?? 0;
  }

  counter(name: string): number {
    return this.counters.get(name) ?? 0;
  }

  count(name: string, by: number): void {
    if (by !== 0) this.counters.set(name, this.counter(name) + by);
  }

  queueStats(now: number): { dest: string; priority: Priority; count: number; oldestMs: number }[] {
    const groups = new Map<string, { dest: string; rank: number; count: number; oldest: number }>();
    const add = (dest: string, rank: number, receivedAt: number, table: string) => {
      const k = `${table}\n${dest}\n${rank}`;
      const g = groups.get(k) ?? { dest, rank, count: 0, oldest: receivedAt };
      g.count++;
      g.oldest = Math.min(g.oldest, receivedAt);
      groups.set(k, g);
    };
    for (const r of this.up) add(r.dest, r.rank, r.receivedAt, 'up');
    for (const r of this.down) add(r.site, r.rank, r.receivedAt, 'down');
    return [...groups.values()].map((g) => ({
      dest: g.dest,
      priority: PRIORITIES[g.rank] as Priority,
      count: g.count,
      oldestMs: now - g.oldest,
    }));
  }

  usage(): StorageUsage {
    const dbBytes = [...this.up, ...this.down].reduce((n, r) => n + r.bytes.length, 0);
    const blobBytes = this.blobs.bytes();
    const externalBytes = this.externalBytes();
    return { dbBytes, blobBytes, externalBytes, total: dbBytes + blobBytes + externalBytes };
  }

  close(): void {
    this.closed = true;
  }
}
