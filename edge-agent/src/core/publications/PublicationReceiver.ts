import type { BlobManifest, DocPublicationState, PublicationDeliveryState } from '@driftline/protocol';
import type { Logger } from '../../ports/Logger.js';
import type {
  BlobSource,
  PublicationEntry,
  PublicationFiles,
  PublicationLedger,
  PublicationSink,
} from './ports.js';

/** `publications:` of the local config: which kinds this site accepts and where they go. */
export interface PublicationsPolicy {
  accept: Partial<Record<string, { dir: string; maxBytes?: number }>>;
  /** Bound on bytes of publications being received at once (D5). */
  quotaBytes: number;
}

export interface ReceiverDeps {
  ledger: PublicationLedger;
  files: PublicationFiles;
  source: BlobSource;
  policy: PublicationsPolicy;
  /** Kinds handled by a sink instead of being placed in `policy.accept[kind].dir`. */
  sinks?: Partial<Record<string, PublicationSink>>;
  now(): number;
  /** Called when states change, so they flow to the hub as facts in the agent document. */
  onStates(states: Record<string, DocPublicationState>): void;
  log: Logger;
  chunkBytes?: number;
}

/** Inline files held in memory between their announcement and the next step (decision 360). */
const MAX_INLINE_HELD = 16;

const FINAL: readonly PublicationDeliveryState[] = ['placed', 'refused', 'expired', 'superseded'];
const ACTIVE: readonly PublicationDeliveryState[] = ['announced', 'downloading', 'verified'];

/** A file name from the manifest that cannot leave the kind's directory. */
export function safeName(name: string, sha256: string): string {
  const base = name.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\.+/, '');
  return base.length > 0 ? base.slice(0, 200) : sha256;
}

/**
 * Receives publications from headquarters (docs/architecture.md#bundles-to-outposts): manifests arrive already
 * verified against the pinned hub key; accepted kinds are downloaded with Range, resuming from the
 * partial file, verified by sha256 and placed atomically into the kind's configured directory.
 */
export class PublicationReceiver {
  /**
   * Files that came inside their manifest (decision 360), by sha256, until the next step writes them to
   * the partial file. Memory only, at most `MAX_INLINE_HELD` of at most `MAX_INLINE_PUBLICATION_BYTES`
   * each (the schema's cap): one lost with a restart is fetched by Range like any other.
   */
  private readonly inline = new Map<string, Uint8Array>();

  constructor(private readonly d: ReceiverDeps) {}

  /** A hub-signed `blob` manifest from the downlink. */
  announce(m: BlobManifest): void {
    if (!m.bundleId || !m.fileKind) return; // a plan-detail blob manifest, not a publication for this site
    if (this.d.ledger.get(m.bundleId)) return; // D2: the same announcement twice changes nothing
    const by = this.d.ledger.all().find((e) => e.supersedes?.includes(m.bundleId as string));
    const entry: PublicationEntry = {
      bundleId: m.bundleId,
      sha256: m.sha256,
      name: m.name ?? m.sha256,
      fileKind: m.fileKind,
      size: m.size,
      state: 'announced',
      bytes: 0,
      updatedAt: this.d.now(),
      expiresAt: m.expiresAt ?? null,
      ...(m.supersedes?.length ? { supersedes: m.supersedes } : {}),
    };
    if (by) {
      // Announced after what replaced it (relays drop a superseded blob): recorded, never fetched.
      this.d.ledger.put({
        ...entry,
        state: 'superseded',
        reason: `superseded by publication ${by.bundleId}`,
      });
      this.d.log.info({ publicationId: m.bundleId, by: by.bundleId }, 'publication superseded');
      this.report();
      return;
    }
    const accept = this.d.policy.accept[m.fileKind];
    const inFlight = this.d.ledger
      .all()
      .filter((e) => e.state === 'announced' || e.state === 'downloading' || e.state === 'verified')
      .reduce((n, e) => n + e.size, 0);
    const sink = this.d.sinks?.[m.fileKind];
    const sinkRefusal = sink?.refuse(entry.name);
    if (sinkRefusal) entry.reason = sinkRefusal;
    else if (!accept && !sink)
      entry.reason = `kind '${m.fileKind}' is not accepted by the local config (publications.accept)`;
    else if (accept && accept.maxBytes !== undefined && m.size > accept.maxBytes)
      entry.reason = `${m.size} bytes is over publications.accept.${m.fileKind}.maxBytes (${accept.maxBytes})`;
    else if (inFlight + m.size > this.d.policy.quotaBytes)
      entry.reason = `over publications.quotaBytes (${inFlight} + ${m.size} > ${this.d.policy.quotaBytes})`;
    else if (m.inline && m.inline.length !== m.size)
      entry.reason = `its inline bytes are ${m.inline.length}, not the signed size ${m.size} (the hub's manifest is inconsistent: publish it again)`;
    if (entry.reason) {
      entry.state = 'refused';
      this.d.log.warn(
        { publicationId: m.bundleId, name: m.name, reason: entry.reason },
        'publication refused',
      );
    }
    this.d.ledger.put(entry);
    if (!entry.reason && m.inline && this.inline.size < MAX_INLINE_HELD) this.inline.set(m.sha256, m.inline);
    // The moment a publication reached the site (bench controlLatency reads it).
    if (!entry.reason)
      this.d.log.info({ publicationId: m.bundleId, name: m.name, kind: m.fileKind }, 'publication announced');
    for (const old of m.supersedes ?? []) this.supersede(old, m.bundleId);
    this.report();
  }

  /**
   * Stops an earlier publication the new one replaces: its download stops and its partial file goes (at the
   * next step, which owns the files); a file already placed stays, unless the new one is placed at the
   * same path, which replaces it by atomic rename.
   */
  private supersede(publicationId: string, by: string): void {
    const old = this.d.ledger.get(publicationId);
    if (!old || old.state === 'refused' || old.state === 'expired' || old.state === 'superseded') return;
    const active = ACTIVE.includes(old.state);
    this.d.ledger.put({
      ...old,
      state: 'superseded',
      bytes: active ? 0 : old.bytes,
      reason: active
        ? `superseded by publication ${by} before it was placed`
        : `superseded by publication ${by}; the placed file stays until one replaces it`,
      updatedAt: this.d.now(),
      ...(active ? { discardPartial: true } : {}),
    });
    this.d.log.info({ publicationId, by }, 'publication superseded');
  }

  /** Whether an entry is still to be fetched or placed (not superseded or expired meanwhile). */
  private stillActive(publicationId: string): boolean {
    const e = this.d.ledger.get(publicationId);
    return !!e && ACTIVE.includes(e.state);
  }

  /** Removes the partial files of superseded publications, unless one in progress has the same bytes. */
  private async discardSuperseded(): Promise<void> {
    const all = this.d.ledger.all();
    for (const e of all) {
      if (!e.discardPartial) continue;
      const shared = all.some((o) => o.sha256 === e.sha256 && ACTIVE.includes(o.state));
      if (!shared) await this.d.files.discard(e.sha256);
      const { discardPartial: _d, ...rest } = e;
      this.d.ledger.put(rest);
    }
  }

  /** Moves the oldest publication in progress by one chunk. Answers whether there is more to do now. */
  async step(): Promise<boolean> {
    await this.discardSuperseded();
    const now = this.d.now();
    let changed = false;
    for (const e of this.d.ledger.all()) {
      if (!FINAL.includes(e.state) && e.expiresAt !== null && e.expiresAt <= now) {
        await this.d.files.discard(e.sha256);
        this.d.ledger.put({ ...e, state: 'expired', updatedAt: now });
        changed = true;
      }
    }
    const next = this.d.ledger.all().find((e) => e.state === 'announced' || e.state === 'downloading');
    if (!next) {
      if (changed) this.report();
      return false;
    }
    let offset = await this.d.files.offset(next.sha256);
    const carried = this.inline.get(next.sha256);
    this.inline.delete(next.sha256);
    if (carried && offset === 0 && carried.length === next.size) {
      // Written as a fetch would write it: the same digest check below decides whether it is taken.
      const out = await this.d.files.openAppend(next.sha256);
      try {
        await out.write(carried);
      } finally {
        await out.close();
      }
      offset = carried.length;
    }
    if (offset < next.size) {
      const end = Math.min(next.size, offset + (this.d.chunkBytes ?? 1024 * 1024)) - 1;
      const r = await this.d.source.fetchInto(next.sha256, offset, end, this.d.files);
      if (!this.stillActive(next.bundleId)) return true; // superseded meanwhile: the next step cleans up
      this.d.ledger.put({ ...next, state: 'downloading', bytes: r.offset, updatedAt: this.d.now() });
      if (!r.ok) {
        this.report();
        return false;
      }
      if (r.offset < next.size) {
        if (next.state === 'announced') this.report();
        return true;
      }
    }
    const digest = await this.d.files.digest(next.sha256);
    if (!this.stillActive(next.bundleId)) return true;
    if (digest !== next.sha256) {
      await this.d.files.discard(next.sha256);
      const reason = `the received bytes hash to ${digest.slice(0, 12)}…, not the signed sha256 (tampered or corrupt)`;
      this.d.ledger.put({ ...next, state: 'refused', bytes: 0, reason, updatedAt: this.d.now() });
      this.d.log.warn({ publicationId: next.bundleId, reason }, 'publication refused');
      this.report();
      return true;
    }
    const sink = this.d.sinks?.[next.fileKind];
    if (sink) {
      const r = await sink
        .apply({ sha256: next.sha256, name: next.name, path: this.d.files.pathOf(next.sha256) })
        .catch((e: unknown) => ({
          ok: false as const,
          reason: `could not take it: ${(e as Error).message}`,
        }));
      await this.d.files.discard(next.sha256);
      if (!this.stillActive(next.bundleId)) return true;
      if (r.ok) {
        this.d.ledger.put({ ...next, state: 'placed', bytes: next.size, updatedAt: this.d.now() });
        this.d.log.info(
          { publicationId: next.bundleId, name: next.name, kind: next.fileKind },
          'publication taken',
        );
      } else {
        this.d.ledger.put({ ...next, state: 'refused', bytes: 0, reason: r.reason, updatedAt: this.d.now() });
        this.d.log.warn({ publicationId: next.bundleId, reason: r.reason }, 'publication refused');
      }
      this.report();
      return true;
    }
    const dir = this.d.policy.accept[next.fileKind]?.dir;
    if (!dir) return true;
    const path = await this.d.files.place(next.sha256, dir, safeName(next.name, next.sha256));
    // Superseded while it was being placed: the file is there (whole and verified), the state stays.
    if (!this.stillActive(next.bundleId)) return true;
    this.d.ledger.put({ ...next, state: 'placed', bytes: next.size, updatedAt: this.d.now() });
    this.d.log.info({ publicationId: next.bundleId, path }, 'publication verified and placed');
    this.report();
    return true;
  }

  /** The entries as the document's `bundles` map holds them (its name and keys are decision 170's exception). */
  states(): Record<string, DocPublicationState> {
    const out: Record<string, DocPublicationState> = {};
    for (const { expiresAt: _e, supersedes: _s, discardPartial: _d, ...s } of this.d.ledger.all())
      out[s.bundleId] = s;
    return out;
  }

  private report(): void {
    this.d.onStates(this.states());
  }
}
