import { createReadStream, mkdirSync, renameSync, statSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { BlobReader, FinishedUpload, HopBackend, Peer } from '@driftline/hop';
import { type BundleId, type DownlinkQuery, type Receipt, WireError } from '@driftline/protocol';
import { describeBundle } from '../../core/describeBundle.js';
import type { Clock } from '../../ports/Clock.js';
import { type IncomingBundle, OutOfSpace } from '../../ports/Custody.js';
import type { SqliteCustody } from '../sqlite/SqliteCustody.js';
import type { SqliteTokens } from '../sqlite/SqliteTokens.js';

/** The relay behind the hop API: custody in SQLite, blobs as files named by their sha256. */
export class RelayBackend implements HopBackend {
  readonly role = 'relay' as const;
  readonly version = '0.1.0';
  readonly blobDir: string;
  /** Called after a commit that added uplink work, to wake the forwarder. */
  onWork: () => void = () => {};

  constructor(
    readonly name: string,
    private readonly custody: SqliteCustody,
    private readonly tokens: SqliteTokens,
    private readonly clock: Clock,
    dataDir: string,
  ) {
    this.blobDir = join(dataDir, 'blobs');
    mkdirSync(this.blobDir, { recursive: true });
  }

  async authenticate(token: string): Promise<Peer | null> {
    return this.tokens.authenticate(token);
  }

  async accept(peer: Peer, bundles: readonly Uint8Array[]): Promise<Receipt[]> {
    const receipts: Receipt[] = new Array(bundles.length);
    const good: { index: number; item: IncomingBundle }[] = [];
    bundles.forEach((bytes, index) => {
      const d = describeBundle(bytes);
      if (d.ok) good.push({ index, item: d.value });
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
    const outcomes = this.guard(() =>
      this.custody.accept(
        peer.name,
        good.map((g) => g.item),
        this.clock.now(),
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
    return receipts;
  }

  async downlink(_peer: Peer, q: DownlinkQuery): Promise<{ bundles: Uint8Array[]; cursor: string }> {
    const r = this.guard(() => this.custody.downlink(q.for, Number(q.after ?? 0), q.limit));
    return { bundles: r.bundles, cursor: String(r.cursor) };
  }

  readonly blobs: BlobReader = {
    stat: async (sha) => {
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

  async uploadFinished(_peer: Peer | null, upload: FinishedUpload): Promise<void> {
    const dest = join(this.blobDir, upload.sha256);
    renameSync(upload.path, dest);
    await rm(`${upload.path}.json`, { force: true });
    this.guard(() =>
      this.custody.recordBlob(upload.sha256, upload.size, dest, upload.metadata, this.clock.now()),
    );
    this.onWork();
  }

  async health(): Promise<{ ok: boolean; detail?: string }> {
    return { ok: true };
  }

  private guard<T>(fn: () => T): T {
    try {
      return fn();
    } catch (e) {
      if (e instanceof OutOfSpace)
        throw new WireError('insufficient-storage', `relay '${this.name}' store is full`);
      throw e;
    }
  }
}
