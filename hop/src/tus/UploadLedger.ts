import { stat } from 'node:fs/promises';
import { join } from 'node:path';

/** The Upload-Metadata key under which hop records the peer that created an upload (never sent on). */
export const OWNER_KEY = 'driftline-peer';

interface Stored {
  size?: number;
  metadata?: Record<string, string | null>;
}

/** What the ledger reads the upload directory through (tus's `FileConfigstore`). */
export interface UploadRecords {
  get(id: string): Promise<Stored | undefined>;
  list?(): Promise<string[]>;
}

/**
 * In-progress tus uploads and the bytes they have reserved (their whole `Upload-Length`, part of which
 * may already be on disk), by creating peer. Creations are checked against it before they exist, so two
 * concurrent creations cannot both pass a cap that only one fits. Rebuilt from the upload directory at
 * start and after expired uploads are removed.
 */
export class UploadLedger {
  private readonly open = new Map<string, { peer: string; size: number }>();

  constructor(
    private readonly directory: string,
    private readonly records: UploadRecords,
  ) {}

  /** Re-reads the upload directory: every upload with a record and a file not yet complete. */
  async load(): Promise<void> {
    const ids = (await this.records.list?.().catch(() => [])) ?? [];
    const next = new Map<string, { peer: string; size: number }>();
    for (const id of ids) {
      const r = await this.records.get(id);
      if (!r || typeof r.size !== 'number') continue;
      const onDisk = await stat(join(this.directory, id)).then(
        (s) => s.size,
        () => -1,
      );
      if (onDisk < 0 || onDisk >= r.size) continue;
      next.set(id, { peer: r.metadata?.[OWNER_KEY] ?? '', size: r.size });
    }
    this.open.clear();
    for (const [k, v] of next) this.open.set(k, v);
  }

  reserve(id: string, peer: string, size: number): void {
    this.open.set(id, { peer, size });
  }

  release(id: string): void {
    this.open.delete(id);
  }

  /** Bytes reserved by every in-progress upload. */
  total(): number {
    let n = 0;
    for (const u of this.open.values()) n += u.size;
    return n;
  }

  /** Bytes reserved by `peer`'s in-progress uploads. */
  byPeer(peer: string): number {
    let n = 0;
    for (const u of this.open.values()) if (u.peer === peer) n += u.size;
    return n;
  }

  /** The peer that created upload `id`, `''` when none was recorded, undefined when there is no such upload. */
  async owner(id: string): Promise<string | undefined> {
    const mem = this.open.get(id);
    if (mem) return mem.peer;
    const r = await this.records.get(id);
    if (!r) return undefined;
    return r.metadata?.[OWNER_KEY] ?? '';
  }
}
