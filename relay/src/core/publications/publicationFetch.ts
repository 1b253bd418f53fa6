import { createHash } from 'node:crypto';
import { type BlobManifest, decodeBundle, decodePayload, wire2 } from '@driftline/protocol';
import type { IncomingBundle } from '../../ports/Custody.js';
import type {
  AnnouncedBlob,
  BlobFetcher,
  ChunkResult,
  PublicationCache,
} from '../../ports/PublicationCache.js';
import type { ContactPlan } from '../contactPlan.js';
import { slotState } from '../upstreamSlot.js';

/**
 * A `blob` manifest from the hub: v1's signed bundle, or the compact v2 `publication` message (decision
 * 505). Not verified here (the agent checks the hub's signature, S4); null when it is neither.
 */
function hubManifest(bytes: Uint8Array): BlobManifest | null {
  if (wire2.isWire2Message(bytes)) {
    const m = wire2.decodeMessage(bytes);
    if (!m.ok || m.value.kind !== 'publication' || m.value.from !== wire2.HUB_NODE_ID) return null;
    return wire2.manifestOfPublication(m.value.body as wire2.PublicationBody, (b) =>
      createHash('sha256').update(b).digest('hex'),
    );
  }
  const d = decodeBundle(bytes);
  if (!d.ok || d.value.header.source !== 'hub') return null;
  const m = decodePayload('blob', d.value.payload);
  return m.ok ? m.value : null;
}

/** Blobs announced by `blob` manifests from the hub in pulled downlink, for `PublicationCache.note`. */
export function announcedBlobs(site: string, items: readonly IncomingBundle[]) {
  const out: AnnouncedBlob[] = [];
  for (const item of items) {
    if (item.kind !== 'blob') continue;
    const m = hubManifest(item.bytes);
    if (!m) continue;
    out.push({
      sha256: m.sha256,
      size: m.size,
      name: m.name ?? m.sha256,
      site,
      expiresAt: m.expiresAt ?? item.expiresAt,
      ...(m.bundleId ? { publicationId: m.bundleId } : {}),
      ...(m.supersedes?.length ? { supersedes: m.supersedes } : {}),
      ...(m.inline ? { inline: m.inline } : {}),
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
