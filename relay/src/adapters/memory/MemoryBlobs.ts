import type { PendingBlob } from '../../ports/BlobUploader.js';
import type { BlobCustody } from '../../ports/Custody.js';

/** What a cached publication tells custody about a blob of the same hash (null: none). */
export type CachedLookup = (sha256: string) => { state: string; sites: readonly string[] } | null;

interface Blob {
  sha256: string;
  size: number;
  path: string;
  metadata: Record<string, string>;
  from: string;
  receivedAt: number;
  order: number;
}

/** The blobs of a `MemoryCustody` (as `SqliteBlobs` is `SqliteCustody`'s). */
export class MemoryBlobs implements BlobCustody {
  private readonly rows = new Map<string, Blob>();
  private readonly uploads = new Map<string, string | null>();
  private readonly aside = new Map<string, { until: number; reason: string }>();
  private order = 0;

  constructor(
    private readonly cached: CachedLookup,
    private readonly fits: (extraBytes: number) => void,
    private readonly count: (name: string, by: number) => void,
  ) {}

  record(
    sha256: string,
    size: number,
    path: string,
    metadata: Record<string, string>,
    fromPeer: string,
    now: number,
  ) {
    if (this.rows.has(sha256)) return;
    this.fits(size);
    const row = {
      sha256,
      size,
      path,
      metadata: { ...metadata },
      from: fromPeer,
      receivedAt: now,
      order: this.order++,
    };
    this.rows.set(sha256, row);
  }

  pending(upstream: string, limit: number, now = Number.MAX_SAFE_INTEGER): PendingBlob[] {
    return [...this.rows.values()]
      .filter((b) => (this.aside.get(`${b.sha256}\n${upstream}`)?.until ?? 0) <= now)
      .sort((a, b) => a.receivedAt - b.receivedAt || a.order - b.order)
      .slice(0, limit)
      .map((b) => ({
        sha256: b.sha256,
        size: b.size,
        path: b.path,
        metadata: { ...b.metadata },
        url: this.uploads.get(`${b.sha256}\n${upstream}`) ?? null,
      }));
  }

  setUploadUrl(sha256: string, upstream: string, url: string | null): void {
    this.uploads.set(`${sha256}\n${upstream}`, url);
  }

  setAside(sha256: string, upstream: string, until: number, reason: string): void {
    this.aside.set(`${sha256}\n${upstream}`, { until, reason: reason.slice(0, 500) });
  }

  setAsideFor(upstream: string, now: number): { sha256: string; until: number; reason: string }[] {
    return [...this.rows.values()]
      .sort((a, b) => a.receivedAt - b.receivedAt || a.order - b.order)
      .flatMap((b) => {
        const a = this.aside.get(`${b.sha256}\n${upstream}`);
        return a && a.until > now ? [{ sha256: b.sha256, ...a }] : [];
      });
  }

  forwarded(sha256: string): string | null {
    const row = this.rows.get(sha256);
    this.rows.delete(sha256);
    for (const k of [...this.uploads.keys()]) if (k.startsWith(`${sha256}\n`)) this.uploads.delete(k);
    for (const k of [...this.aside.keys()]) if (k.startsWith(`${sha256}\n`)) this.aside.delete(k);
    this.count('blobs_forwarded', 1);
    return row && !this.cached(sha256) ? row.path : null;
  }

  lost(sha256: string): void {
    this.rows.delete(sha256);
    for (const k of [...this.uploads.keys()]) if (k.startsWith(`${sha256}\n`)) this.uploads.delete(k);
    for (const k of [...this.aside.keys()]) if (k.startsWith(`${sha256}\n`)) this.aside.delete(k);
    this.count('blobs_lost', 1);
  }

  visibleTo(sha256: string, peer: { name: string; sites: readonly string[] }): boolean {
    if (this.rows.get(sha256)?.from === peer.name) return true;
    const c = this.cached(sha256);
    if (c?.state !== 'held') return false;
    return peer.sites.includes('*') || c.sites.some((s) => peer.sites.includes(s));
  }

  /** Bytes of all blobs held. */
  bytes(): number {
    return [...this.rows.values()].reduce((n, b) => n + b.size, 0);
  }

  /** Bytes of the blobs `peer` uploaded. */
  peerBytes(peer: string): number {
    return [...this.rows.values()].filter((b) => b.from === peer).reduce((n, b) => n + b.size, 0);
  }

  /** Peers holding blobs here. */
  peers(): string[] {
    return [...new Set([...this.rows.values()].map((b) => b.from))];
  }
}
