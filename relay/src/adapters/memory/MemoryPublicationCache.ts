import type { AnnouncedBlob, CachedPublication, PublicationCache } from '../../ports/PublicationCache.js';

interface Entry extends CachedPublication {
  createdAt: number;
  /** Insertion order, so entries announced at the same time list in the order they came. */
  order: number;
}

/** Which publication needs which blob at one site; `sha256` null: superseded before it was announced here. */
interface Ref {
  sha256: string | null;
  superseded: boolean;
}

const copy = (e: Entry): CachedPublication => ({
  sha256: e.sha256,
  size: e.size,
  name: e.name,
  sites: [...e.sites],
  state: e.state,
  fetched: e.fetched,
  expiresAt: e.expiresAt,
  reason: e.reason,
});

/**
 * The cache of publications in memory, for tests and as a model of the port: the same states,
 * order, quota and counters as `SqlitePublicationCache` (both pass `runPublicationCacheContract`). It keeps no
 * files (the `BlobFetcher` does); nothing survives the process. `find` answers what `MemoryCustody`'s
 * `cached` lookup needs, so the two can be wired together as the SQLite ones share a file.
 */
export class MemoryPublicationCache implements PublicationCache {
  private readonly entries = new Map<string, Entry>();
  /** By `<publicationId>\n<site>`; an older manifest's publication has id ''. */
  private readonly refs = new Map<string, Ref>();
  private order = 0;

  constructor(
    private readonly quotaBytes: number,
    private readonly now: () => number,
    private readonly count: (name: string, by: number) => void = () => {},
  ) {}

  /** The entry for `sha256`, or null (a copy: changing it changes nothing here). */
  find(sha256: string): CachedPublication | null {
    const e = this.entries.get(sha256);
    return e ? copy(e) : null;
  }

  note(items: readonly AnnouncedBlob[]): void {
    for (const i of items) {
      const key = refKey(i.publicationId ?? '', i.site);
      const ref = this.refs.get(key);
      if (ref?.superseded) continue; // announced after what replaced it: nothing to fetch
      this.refs.set(key, { sha256: i.sha256, superseded: false });
      this.add(i);
      for (const old of i.supersedes ?? []) this.supersede(old, i.site);
    }
  }

  /** Marks one publication superseded at one site; its blob goes once no live publication needs it. */
  private supersede(publicationId: string, site: string): void {
    const key = refKey(publicationId, site);
    const ref = this.refs.get(key);
    if (ref?.superseded) return;
    this.refs.set(key, { sha256: ref?.sha256 ?? null, superseded: true });
    const sha = ref?.sha256;
    if (!sha) return;
    // Content-addressed, one copy: another live publication (any site, or this one's successor with the
    // same bytes) keeps the blob.
    for (const r of this.refs.values()) if (r.sha256 === sha && !r.superseded) return;
    const e = this.entries.get(sha);
    if (!e || e.state === 'superseded') return;
    e.state = 'superseded';
    e.reason = `superseded by a later publication (${publicationId} at ${site})`;
    this.count('bundles_superseded', 1);
  }

  private add(i: AnnouncedBlob): void {
    const have = this.entries.get(i.sha256);
    if (have) {
      if (!have.sites.includes(i.site)) have.sites.push(i.site);
      have.expiresAt = Math.max(have.expiresAt, i.expiresAt);
      // A blob marked superseded but not yet removed is live again: held if it was whole.
      if (have.state === 'superseded') {
        have.state = have.fetched >= have.size ? 'held' : 'fetching';
        have.reason = null;
      }
      return;
    }
    let used = 0;
    for (const e of this.entries.values())
      if (e.state !== 'refused' && e.state !== 'superseded') used += e.size;
    const over = used + i.size > this.quotaBytes;
    this.entries.set(i.sha256, {
      sha256: i.sha256,
      size: i.size,
      name: i.name,
      sites: [i.site],
      state: over ? 'refused' : 'fetching',
      fetched: 0,
      expiresAt: i.expiresAt,
      reason: over
        ? `over the relay's publications quota (${used} + ${i.size} > ${this.quotaBytes} bytes)`
        : null,
      createdAt: this.now(),
      order: this.order++,
    });
    if (over) this.count('bundles_refused_quota', 1);
  }

  /** Entries oldest first (by announcement time, then arrival). */
  private sorted(): Entry[] {
    return [...this.entries.values()].sort((a, b) => a.createdAt - b.createdAt || a.order - b.order);
  }

  nextToFetch(): CachedPublication | null {
    let best: Entry | null = null;
    for (const e of this.entries.values()) {
      if (e.state !== 'fetching') continue;
      if (!best || e.createdAt < best.createdAt || (e.createdAt === best.createdAt && e.sha256 < best.sha256))
        best = e;
    }
    return best ? copy(best) : null;
  }

  setFetched(sha256: string, bytes: number): void {
    const e = this.entries.get(sha256);
    if (e) e.fetched = bytes;
  }

  held(sha256: string): void {
    // Only a blob still being fetched: one superseded while its last chunk was in flight stays superseded.
    const e = this.entries.get(sha256);
    if (e?.state === 'fetching') {
      e.state = 'held';
      e.fetched = e.size;
    }
    this.count('bundles_fetched', 1);
  }

  refuse(sha256: string, reason: string): void {
    const e = this.entries.get(sha256);
    if (e) {
      e.state = 'refused';
      e.reason = reason;
    }
    this.count('bundles_refused', 1);
  }

  expire(now: number): CachedPublication[] {
    const gone = this.sorted().filter((e) => e.expiresAt <= now);
    for (const e of gone) this.entries.delete(e.sha256);
    if (gone.length > 0) this.count('bundles_expired', gone.length);
    return gone.map(copy);
  }

  removeSuperseded(): CachedPublication[] {
    const gone = this.sorted().filter((e) => e.state === 'superseded');
    for (const e of gone) this.entries.delete(e.sha256);
    return gone.map(copy);
  }

  list(): CachedPublication[] {
    return this.sorted().map(copy);
  }
}

const refKey = (publicationId: string, site: string) => `${publicationId}\n${site}`;
