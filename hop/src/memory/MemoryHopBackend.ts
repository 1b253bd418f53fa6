import { readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { Readable } from 'node:stream';
import {
  type BundleId,
  type DownlinkQuery,
  decodeBundle,
  endpointText,
  type Receipt,
} from '@driftline/protocol';
import { DownlinkWaiters, type Holder, MAX_HELD_PER_HOLDER, type WaitEnd } from '../http/downlinkWaiters.js';
import type { BlobReader, FinishedUpload, HopBackend, Peer, SourceClocks } from '../ports/HopBackend.js';

/**
 * An in-memory `HopBackend`: accepts every well-framed bundle, deduplicates by id, serves downlink
 * from `enqueueDownlink`, keeps blobs in memory. For tests, and as a terminal node in relay chain tests.
 * Not durable: nothing survives the process.
 */
export class MemoryHopBackend implements HopBackend {
  readonly role: 'relay' | 'hub';
  readonly name: string;
  readonly version = 'test';
  /** Every bundle taken into custody, by id, in arrival order. */
  readonly stored = new Map<string, Uint8Array>();
  /** How many times each id arrived (1 = exactly once). */
  readonly arrivals = new Map<string, number>();
  readonly blobData = new Map<string, { bytes: Buffer; metadata: Record<string, string>; mtimeMs: number }>();
  private readonly tokens = new Map<string, Peer>();
  private readonly down: { seq: number; site: string; bytes: Uint8Array }[] = [];
  private seq = 0;
  ready = true;
  /** When set, `accept` and `uploadFinished` throw it (simulates a full disk or a crash). */
  failWith: Error | null = null;

  /** Longest hold granted (`wait`), seconds; unset: the hop server's default. */
  readonly maxHoldS?: number;

  constructor(opts: { name?: string; role?: 'relay' | 'hub'; maxHoldS?: number } = {}) {
    this.name = opts.name ?? 'memory';
    if (opts.maxHoldS !== undefined) this.maxHoldS = opts.maxHoldS;
    this.role = opts.role ?? 'hub';
  }

  addToken(token: string, peer: Peer): void {
    this.tokens.set(token, peer);
  }

  /** The token stops working (a revocation). */
  removeToken(token: string): void {
    this.tokens.delete(token);
  }

  enqueueDownlink(site: string, bundle: Uint8Array): void {
    this.down.push({ seq: ++this.seq, site, bytes: bundle });
    this.held.notify(site);
  }

  /** Held downlink pulls (`wait`), woken by `enqueueDownlink`. */
  readonly held = new DownlinkWaiters();

  readonly keepHeld = MAX_HELD_PER_HOLDER;

  waitForDownlink(site: string, ms: number, signal: AbortSignal, holder?: Holder): Promise<WaitEnd> {
    return this.held.wait(site, ms, signal, holder);
  }

  async authenticate(token: string): Promise<Peer | null> {
    return this.tokens.get(token) ?? null;
  }

  /** The source clocks the last batch came with (what the path said of each source's clock). */
  lastClocks: SourceClocks | undefined;

  async accept(_peer: Peer, bundles: readonly Uint8Array[], clocks?: SourceClocks): Promise<Receipt[]> {
    this.lastClocks = clocks;
    if (this.failWith) throw this.failWith;
    return bundles.map((bytes, index) => {
      const d = decodeBundle(bytes);
      if (!d.ok)
        return {
          bundleId: null,
          index,
          status: 'rejected',
          code: d.error.code,
          message: d.error.message,
          by: this.name,
        };
      const id = d.value.header.id as BundleId;
      this.arrivals.set(id, (this.arrivals.get(id) ?? 0) + 1);
      if (this.stored.has(id)) return { bundleId: id, index, status: 'duplicate', by: this.name };
      this.stored.set(id, bytes.slice());
      const dest = d.value.header.destination;
      if (dest !== 'hub') this.enqueueDownlink(endpointText({ site: dest.site }), bytes.slice());
      return { bundleId: id, index, status: 'stored', by: this.name };
    });
  }

  async downlink(_peer: Peer, q: DownlinkQuery): Promise<{ bundles: Uint8Array[]; cursor: string }> {
    const after = Number(q.after ?? 0);
    const rows = this.down.filter((r) => r.site === q.for && r.seq > after).slice(0, q.limit);
    const last = rows.at(-1);
    return { bundles: rows.map((r) => r.bytes), cursor: String(last ? last.seq : after) };
  }

  readonly blobs: BlobReader = {
    stat: async (sha) => {
      const b = this.blobData.get(sha);
      return b ? { size: b.bytes.length, etag: `"${sha}"`, mtimeMs: b.mtimeMs } : null;
    },
    read: (sha, start, end) =>
      Readable.from([this.blobData.get(sha)?.bytes.subarray(start, end + 1) ?? Buffer.alloc(0)]),
  };

  async uploadFinished(_peer: Peer | null, upload: FinishedUpload): Promise<void> {
    if (this.failWith) throw this.failWith;
    this.blobData.set(upload.sha256, {
      bytes: readFileSync(upload.path),
      metadata: upload.metadata,
      mtimeMs: 0,
    });
    await rm(upload.path, { force: true });
    await rm(`${upload.path}.json`, { force: true });
  }

  async health(): Promise<{ ok: boolean; detail?: string }> {
    return this.ready ? { ok: true } : { ok: false, detail: 'not ready' };
  }
}
