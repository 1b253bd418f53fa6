import { createReadStream, mkdirSync, renameSync, statSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import {
  type BlobReader,
  DownlinkWaiters,
  type FinishedUpload,
  type Holder,
  type HopBackend,
  type Custody as HopCustody,
  MAX_HELD_PER_HOLDER,
  type Peer,
  type Reserved,
  RetryLaterError,
  type SourceClocks,
  scopeBatch,
  type WaitEnd,
  type Wire2Backend,
} from '@driftline/hop';
import {
  type BundleId,
  type DownlinkQuery,
  type Receipt,
  type RelayRefusal,
  WireError,
} from '@driftline/protocol';
import { describeBundle } from '../../core/describeBundle.js';
import type { Clock } from '../../ports/Clock.js';
import { type Custody, type IncomingBundle, OutOfSpace, QuotaExceeded } from '../../ports/Custody.js';
import type { SqliteTokens } from '../sqlite/SqliteTokens.js';

/** Why the relay refused a peer's traffic: the label of `driftline_relay_peer_refusals_total`. */
export type PeerRefusal = 'foreign-site' | 'not-uplink' | 'quota-bundles' | 'quota-bytes' | 'storage-full';

/** Per-peer limits (relay.yaml `limits`). */
export interface PeerLimits {
  peerMaxBundles: number;
  peerMaxBytes: number;
  retryAfterS: number;
  /** Longest hold of a downlink pull, seconds (docs/decisions/320-bytes-on-a-costly-link.md). */
  maxHoldS?: number;
}

/** Bytes reserved by in-progress uploads (the hop server's tus ledger), all and by peer. */
export interface UploadReservations {
  reservedBytes(): number;
  reservedBy(peer: string): number;
}

/** The relay behind the hop API: custody in SQLite, blobs as files named by their sha256. */
export class RelayBackend implements HopBackend {
  readonly role = 'relay' as const;
  readonly version = '0.1.0';
  readonly blobDir: string;
  /** Called after a commit that added uplink work, to wake the forwarder. */
  onWork: () => void = () => {};
  /** Called for every bundle or upload refused to a peer (counted in `/metrics`). */
  onRefused: (peer: string, reason: PeerRefusal, n: number) => void = () => {};
  /** What upstream refused of a site's bundles, sent with its downlink pages (the wiring sets it). */
  refusalsFor?: (site: string) => RelayRefusal[];
  /** Hop v2 (decision 495), once the wiring sets it. */
  wire2?: Wire2Backend;
  /** The hop server's in-progress uploads, once it exists. */
  uploads: UploadReservations = { reservedBytes: () => 0, reservedBy: () => 0 };

  constructor(
    readonly name: string,
    private readonly custody: Custody,
    private readonly tokens: SqliteTokens,
    private readonly clock: Clock,
    dataDir: string,
    private readonly limits: PeerLimits,
  ) {
    this.blobDir = join(dataDir, 'blobs');
    mkdirSync(this.blobDir, { recursive: true });
    custody.externalBytes = () => this.uploads.reservedBytes();
  }

  async authenticate(token: string): Promise<Peer | null> {
    return this.tokens.authenticate(token);
  }

  /**
   * Called with each batch's bundles and its signed custody records (decision 290), before custody
   * takes them; `app` keeps them for the forwarder (`CustodyChains`).
   */
  onCustody: (bundles: readonly Uint8Array[], records: readonly string[]) => Promise<void> = async () => {};

  /** Takes a batch into custody, each bundle with its source's clock minus this relay's (when known). */
  async accept(
    peer: Peer,
    bundles: readonly Uint8Array[],
    clocks?: SourceClocks,
    chain?: HopCustody,
  ): Promise<Receipt[]> {
    if (chain && chain.records.length > 0) await this.onCustody(bundles, chain.records);
    // each v2 sender's key read once a batch: scopeBatch and describeBundle both ask
    const keys = new Map<number, ReturnType<SqliteTokens['wire2Key']>>();
    const keyOf = (from: number) => {
      if (!keys.has(from)) keys.set(from, this.tokens.wire2Key(from));
      return keys.get(from) ?? null;
    };
    const scoped = scopeBatch(peer, bundles, this.name, keyOf);
    for (const r of scoped.refused) this.onRefused(peer.name, r.reason, 1);
    const receipts: Receipt[] = new Array(scoped.allowed.length);
    const good: { index: number; item: IncomingBundle }[] = [];
    scoped.allowed.forEach((bytes, index) => {
      const d = describeBundle(bytes, (from) => wire2Source(keyOf(from)), this.clock.now());
      if (d.ok)
        good.push({
          index,
          item: { ...d.value, clock: d.value.source && clocks ? clocks(d.value.source) : null },
        });
      else
        receipts[index] = {
          bundleId: null,
          index,
          status: 'rejected',
          code: d.code,
          message: d.message,
          by: this.name,
        };
    });
    const outcomes = this.guard(peer.name, () =>
      this.custody.accept(
        peer.name,
        good.map((g) => g.item),
        this.clock.now(),
        {
          maxBundles: this.limits.peerMaxBundles,
          maxBytes: this.limits.peerMaxBytes,
          reservedBytes: this.uploads.reservedBy(peer.name),
        },
      ),
    );
    good.forEach((g, i) => {
      const o = outcomes[i];
      const id = g.item.id as BundleId;
      receipts[g.index] =
        o === 'expired'
          ? {
              bundleId: id,
              index: g.index,
              status: 'rejected',
              code: 'expired',
              message: 'the bundle outlived its lifetime before it arrived',
              by: this.name,
            }
          : { bundleId: id, index: g.index, status: o as 'stored' | 'duplicate', by: this.name };
    });
    if (outcomes.includes('stored')) this.onWork();
    return scoped.complete(receipts);
  }

  /** Held downlink pulls; `app` notifies a site after each page of its downlink is committed. */
  readonly held = new DownlinkWaiters();

  readonly keepHeld = MAX_HELD_PER_HOLDER;

  waitForDownlink(site: string, ms: number, signal: AbortSignal, holder?: Holder): Promise<WaitEnd> {
    return this.held.wait(site, ms, signal, holder);
  }

  get maxHoldS(): number | undefined {
    return this.limits.maxHoldS;
  }

  async downlink(peer: Peer, q: DownlinkQuery): Promise<{ bundles: Uint8Array[]; cursor: string }> {
    const r = this.guard(peer.name, () => this.custody.downlink(q.for, Number(q.after ?? 0), q.limit));
    return { bundles: r.bundles, cursor: String(r.cursor) };
  }

  readonly blobs: BlobReader = {
    stat: async (sha, peer) => {
      if (!peer || !this.custody.blobs.visibleTo(sha, peer)) return null;
      try {
        const s = statSync(join(this.blobDir, sha));
        // content-addressed: the hash names exactly these bytes, a strong validator (RFC 9110 §8.8.3)
        return { size: s.size, etag: `"${sha}"`, mtimeMs: s.mtimeMs };
      } catch {
        return null;
      }
    },
    read: (sha, start, end) => createReadStream(join(this.blobDir, sha), { start, end }),
  };

  /** tus admission: the disk cap (`storage.maxBytes`) and the peer's byte quota, in-progress uploads included. */
  admitUpload(peer: Peer, size: number, reserved: Reserved): void {
    const cap = this.custody.maxBytes;
    const u = this.custody.usage();
    const used = u.dbBytes + u.blobBytes + reserved.total;
    if (cap !== undefined && used + size > cap) {
      this.onRefused(peer.name, 'storage-full', 1);
      throw new WireError(
        'insufficient-storage',
        `relay '${this.name}' keeps ${used} bytes and an upload of ${size} would pass storage.maxBytes (${cap})`,
      );
    }
    const held = this.custody.held(peer.name).bytes + reserved.byPeer;
    if (held + size > this.limits.peerMaxBytes) {
      this.onRefused(peer.name, 'quota-bytes', 1);
      throw new WireError(
        'insufficient-storage',
        `peer '${peer.name}' holds ${held} bytes here; ${size} more would pass its quota of ${this.limits.peerMaxBytes} (limits.peerMaxBytes)`,
      );
    }
  }

  async uploadFinished(peer: Peer | null, upload: FinishedUpload): Promise<void> {
    const dest = join(this.blobDir, upload.sha256);
    // The folder may have been deleted under a running relay: a new upload heals what it lost.
    mkdirSync(this.blobDir, { recursive: true });
    renameSync(upload.path, dest);
    await rm(`${upload.path}.json`, { force: true });
    this.guard(peer?.name ?? '', () =>
      this.custody.blobs.record(
        upload.sha256,
        upload.size,
        dest,
        upload.metadata,
        peer?.name ?? '',
        this.clock.now(),
      ),
    );
    this.onWork();
  }

  async health(): Promise<{ ok: boolean; detail?: string }> {
    return { ok: true };
  }

  private guard<T>(peer: string, fn: () => T): T {
    try {
      return fn();
    } catch (e) {
      if (e instanceof OutOfSpace) {
        this.onRefused(peer, 'storage-full', 1);
        throw new WireError(
          'insufficient-storage',
          `relay '${this.name}' store is full (storage.maxBytes or the disk)`,
        );
      }
      if (e instanceof QuotaExceeded && e.what === 'bundles') {
        this.onRefused(peer, 'quota-bundles', 1);
        throw new RetryLaterError(
          'too-many-requests',
          `${e.message} (limits.peerMaxBundles); retry once the relay has forwarded some`,
          this.limits.retryAfterS,
        );
      }
      if (e instanceof QuotaExceeded) {
        this.onRefused(peer, 'quota-bytes', 1);
        throw new WireError('insufficient-storage', `${e.message} (limits.peerMaxBytes)`);
      }
      throw e;
    }
  }
}

/** `site/agent` of a v2 sender registered here; null for one registered at a relay downstream. */
function wire2Source(k: { site: string; agent: string } | null): string | null {
  return k ? `${k.site}/${k.agent}` : null;
}
