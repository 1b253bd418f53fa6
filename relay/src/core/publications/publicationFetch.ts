import { decodeBundle, decodePayload } from '@driftline/protocol';
import type { IncomingBundle } from '../../ports/Custody.js';
import type {
  AnnouncedBlob,
  BlobFetcher,
  ChunkResult,
  PublicationCache,
} from '../../ports/PublicationCache.js';
import type { ContactPlan } from '../contactPlan.js';
import { slotState } from '../upstreamSlot.js';

/** Blobs announced by `blob` manifests from the hub in pulled downlink, for `PublicationCache.note`. */
export function announcedBlobs(site: string, items: readonly IncomingBundle[]) {
  const out: AnnouncedBlob[] = [];
  for (const item of items) {
    if (item.kind !== 'blob') continue;
    const d = decodeBundle(item.bytes);
    if (!d.ok || d.value.header.source !== 'hub') continue;
    const m = decodePayload('blob', d.value.payload);
    if (!m.ok) continue;
    out.push({
      sha256: m.value.sha256,
      size: m.value.size,
      name: m.value.name ?? m.value.sha256,
      site,
      expiresAt: m.value.expiresAt ?? item.expiresAt,
      ...(m.value.bundleId ? { publicationId: m.value.bundleId } : {}),
      ...(m.value.supersedes?.length ? { supersedes: m.value.supersedes } : {}),
      ...(m.value.inline ? { inline: m.value.inline } : {}),
    });
  }
  return out;
}

export interface FetchUpstream {
  name: string;
  url: string;
  token: string;
  plan: ContactPlan;
  /** Upstream backoff shared with forwarding: no fetch before this time. */
  retryAt(): number;
}

export type FetchEvent =
  | { type: 'chunk'; sha256: string; offset: number; size: number; bytes: number }
  | { type: 'held'; sha256: string; size: number }
  | { type: 'failed'; sha256: string; reason: string; retryable: boolean }
  | { type: 'refused'; sha256: string; reason: string };

/**
 * One chunk of the oldest pending publication, from the first upstream whose contact window is open, and
 * only when no uplink bundle is waiting: publications are the lowest priority (docs/architecture.md#bundles-to-outposts).
 * Answers whether it moved bytes (the caller loops while it does).
 */
export async function publicationFetchStep(d: {
  cache: PublicationCache;
  fetcher: BlobFetcher;
  upstreams: readonly FetchUpstream[];
  now: () => number;
  uplinkBusy: () => boolean;
  chunkBytes: number;
  emit: (e: FetchEvent) => void;
  /**
   * Files their manifests carried (decision 360), by sha256: kept without a fetch (they cost no link
   * time, so neither the uplink nor a closed window holds them back). Taken out of the map when used.
   */
  inline?: Map<string, Uint8Array>;
}): Promise<boolean> {
  for (const gone of d.cache.expire(d.now())) await d.fetcher.remove(gone.sha256);
  for (const gone of d.cache.removeSuperseded()) await d.fetcher.remove(gone.sha256);
  const carried = d.inline && nextCarried(d.cache, d.inline);
  if (!carried && d.uplinkBusy()) return false;
  const next = carried?.next ?? d.cache.nextToFetch();
  if (!next) return false;
  let r: ChunkResult;
  if (carried) r = await d.fetcher.adopt(next.sha256, carried.bytes);
  else {
    const up = d.upstreams.find((u) => slotState({ plan: u.plan, retryAt: u.retryAt() }, d.now()).ready);
    if (!up) return false;
    r = await d.fetcher.fetchChunk(up, next.sha256, next.size, d.chunkBytes);
  }
  d.cache.setFetched(next.sha256, r.offset);
  if (!r.ok) {
    if (r.code === 'hash-mismatch') {
      d.cache.refuse(next.sha256, r.message);
      d.emit({ type: 'refused', sha256: next.sha256, reason: r.message });
    } else d.emit({ type: 'failed', sha256: next.sha256, reason: r.message, retryable: r.retryable });
    return false;
  }
  d.emit({ type: 'chunk', sha256: next.sha256, offset: r.offset, size: next.size, bytes: r.bytes });
  if (r.complete) {
    d.cache.held(next.sha256);
    d.emit({ type: 'held', sha256: next.sha256, size: next.size });
  }
  return true;
}

/** The first blob being fetched whose bytes a manifest carried, taken out of `inline`; stale ones are dropped. */
function nextCarried(cache: PublicationCache, inline: Map<string, Uint8Array>) {
  if (inline.size === 0) return null;
  for (const p of cache.list()) {
    const bytes = inline.get(p.sha256);
    if (!bytes) continue;
    inline.delete(p.sha256);
    if (p.state === 'fetching' && p.fetched === 0 && bytes.length === p.size) return { next: p, bytes };
  }
  // What is left names nothing the cache still fetches (refused over quota, held, gone).
  inline.clear();
  return null;
}
