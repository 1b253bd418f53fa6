import type { BlobManifest, BundleDeliveryState, DocBundleState } from '@driftline/protocol';
import type { BlobSource, BundleEntry, BundleFiles, BundleLedger } from './ports.js';

/** `bundles:` of the local config: which kinds this site accepts and where they go. */
export interface BundlesPolicy {
  accept: Partial<Record<string, { dir: string; maxBytes?: number }>>;
  /** Bound on bytes of bundles being received at once (D5). */
  quotaBytes: number;
}

export interface ReceiverDeps {
  ledger: BundleLedger;
  files: BundleFiles;
  source: BlobSource;
  policy: BundlesPolicy;
  now(): number;
  /** Called when states change, so they flow to the hub as facts in the agent document. */
  onStates(states: Record<string, DocBundleState>): void;
  log: { info(o: object, m: string): void; warn(o: object, m: string): void };
  chunkBytes?: number;
}

const FINAL: readonly BundleDeliveryState[] = ['placed', 'refused', 'expired'];

/** A file name from the manifest that cannot leave the kind's directory. */
export function safeName(name: string, sha256: string): string {
  const base = name.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\.+/, '');
  return base.length > 0 ? base.slice(0, 200) : sha256;
}

/**
 * Receives bundles from headquarters (DESIGN, "Bundles to outposts"): manifests arrive already
 * verified against the pinned hub key; accepted kinds are downloaded with Range, resuming from the
 * partial file, verified by sha256 and placed atomically into the kind's configured directory.
 */
export class BundleReceiver {
  constructor(private readonly d: ReceiverDeps) {}

  /** A hub-signed `blob` manifest from the downlink. */
  announce(m: BlobManifest): void {
    if (!m.bundleId || !m.fileKind) return; // a plan-detail blob manifest, not a bundle to this site
    if (this.d.ledger.get(m.bundleId)) return; // D2: the same announcement twice changes nothing
    const entry: BundleEntry = {
      bundleId: m.bundleId,
      sha256: m.sha256,
      name: m.name ?? m.sha256,
      fileKind: m.fileKind,
      size: m.size,
      state: 'announced',
      bytes: 0,
      updatedAt: this.d.now(),
      expiresAt: m.expiresAt ?? null,
    };
    const accept = this.d.policy.accept[m.fileKind];
    const inFlight = this.d.ledger
      .all()
      .filter((e) => e.state === 'announced' || e.state === 'downloading' || e.state === 'verified')
      .reduce((n, e) => n + e.size, 0);
    if (!accept) entry.reason = `kind '${m.fileKind}' is not accepted by the local config (bundles.accept)`;
    else if (accept.maxBytes !== undefined && m.size > accept.maxBytes)
      entry.reason = `${m.size} bytes is over bundles.accept.${m.fileKind}.maxBytes (${accept.maxBytes})`;
    else if (inFlight + m.size > this.d.policy.quotaBytes)
      entry.reason = `over bundles.quotaBytes (${inFlight} + ${m.size} > ${this.d.policy.quotaBytes})`;
    if (entry.reason) {
      entry.state = 'refused';
      this.d.log.warn({ bundleId: m.bundleId, name: m.name, reason: entry.reason }, 'bundle refused');
    }
    this.d.ledger.put(entry);
    this.report();
  }

  /** Records a manifest refused before it could be read (bad signature): reported, never fetched. */
  refusedManifest(bundleId: string, reason: string): void {
    this.d.log.warn({ bundleId, reason }, 'bundle manifest refused');
  }

  /** Moves the oldest bundle in progress by one chunk. Answers whether there is more to do now. */
  async step(): Promise<boolean> {
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
    const offset = await this.d.files.offset(next.sha256);
    if (offset < next.size) {
      const end = Math.min(next.size, offset + (this.d.chunkBytes ?? 1024 * 1024)) - 1;
      const r = await this.d.source.fetchInto(next.sha256, offset, end, this.d.files);
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
    if (digest !== next.sha256) {
      await this.d.files.discard(next.sha256);
      const reason = `the received bytes hash to ${digest.slice(0, 12)}…, not the signed sha256 (tampered or corrupt)`;
      this.d.ledger.put({ ...next, state: 'refused', bytes: 0, reason, updatedAt: this.d.now() });
      this.d.log.warn({ bundleId: next.bundleId, reason }, 'bundle refused');
      this.report();
      return true;
    }
    const dir = this.d.policy.accept[next.fileKind]?.dir;
    if (!dir) return true;
    const path = await this.d.files.place(next.sha256, dir, safeName(next.name, next.sha256));
    this.d.ledger.put({ ...next, state: 'placed', bytes: next.size, updatedAt: this.d.now() });
    this.d.log.info({ bundleId: next.bundleId, path }, 'bundle verified and placed');
    this.report();
    return true;
  }

  states(): Record<string, DocBundleState> {
    const out: Record<string, DocBundleState> = {};
    for (const { expiresAt: _e, ...s } of this.d.ledger.all()) out[s.bundleId] = s;
    return out;
  }

  private report(): void {
    this.d.onStates(this.states());
  }
}
