import { createHash } from 'node:crypto';
import {
  type BlobReader,
  type Custody,
  type FinishedUpload,
  type HopBackend,
  type Peer,
  type SourceClocks,
  scopeBatch,
  type Wire2Backend,
} from '@driftline/hop';
import { type DownlinkQuery, parseDocId, type Receipt, type RelayStatus } from '@driftline/protocol';
import type { DocReplicas } from '../../core/DocReplicas.js';
import { type DownlinkBell, WATCH_MAX_S, watchDownlink } from '../../core/downlinkBell.js';
import type { Ingest } from '../../core/Ingest.js';
import { peerLive } from '../../core/peers.js';
import type { StoreHealth } from '../../core/storeHealth.js';
import type { BlobFiles } from '../../ports/BlobFiles.js';
import type { Clock } from '../../ports/Clock.js';
import type { ApprovalRow, IngestStore, PeopleStore, PlanRequestRow } from '../../ports/HubStore.js';
import type { CustodyClocks } from './custodyClocks.js';

/** How often a peer token's `lastUsedAt` is written at most. */
const USE_WRITE_MS = 60_000;

export const sha256Hex = (s: string) => createHash('sha256').update(s).digest('hex');

/** The hub as the final hop (step 7 of docs/architecture.md#the-trip): custody is the merge itself. */
export class HubHopBackend implements HopBackend {
  readonly role = 'hub' as const;
  readonly name = 'hub';

  constructor(
    private readonly d: {
      store: IngestStore & Pick<PeopleStore, 'peerByToken' | 'getApproval'>;
      /** Whether the store answers; absent: always healthy (an embedded SQLite file). */
      health?: () => Promise<StoreHealth>;
      ingest: Ingest;
      replicas: DocReplicas;
      blobs: BlobFiles;
      clock: Clock;
      version: string;
      onDelivered?: (r: PlanRequestRow[]) => void;
      onExpiredDownlink?: (n: number) => void;
      /** Counts bundles refused because their source is not one of the posting peer's sites. */
      onForeignSite?: (peer: string, n: number) => void;
      /**
       * Whether `peer` may read blob `sha256`: a relay reads the files published to its sites and the
       * blobs its sites uploaded, nothing else. Default: any peer reads any blob.
       */
      mayRead?: (peer: Peer, sha256: string) => Promise<boolean>;
      /** Throws `insufficient-storage` when `bytes` more would pass the hub's disk cap. */
      checkDisk?: (bytes: number) => void;
      /** Checks the signed timing chain of each batch (decision 290); absent: plain estimates only. */
      custodyClocks?: CustodyClocks;
      /** Rung by each downlink commit: with it, relays' downlink watches are held (decision 620). */
      bell?: DownlinkBell;
      /** Other hubs write the store too: a held watch reads it again this often, ms (decision 620). */
      watchRecheckMs?: number;
    },
  ) {}

  /** Held up to an hour; only with a bell to wake it (decision 620). */
  get watchMaxS(): number | undefined {
    return this.d.bell ? WATCH_MAX_S : undefined;
  }

  /**
   * A relay's watch over its sites' downlink (`POST /v1/downlink/watch`, decision 620): the sites with rows
   * after the cursor named, at once or at the first commit for one of them.
   */
  async watchDownlink(cursors: ReadonlyMap<string, number>, ms: number, signal: AbortSignal) {
    const { bell, store, watchRecheckMs } = this.d;
    if (!bell) return [];
    return watchDownlink(
      {
        heads: (sites) => store.downlinkHeads(sites),
        bell,
        ...(watchRecheckMs ? { recheckMs: watchRecheckMs } : {}),
      },
      cursors,
      ms,
      signal,
    );
  }

  get version() {
    return this.d.version;
  }
  /** The hub's blobs as hop serves them: a peer sees only the ones it may read (404 for the rest). */
  readonly blobs: BlobReader = {
    stat: async (sha, peer) => {
      if (peer && this.d.mayRead && !peer.sites.includes('*') && !(await this.d.mayRead(peer, sha)))
        return null;
      return this.d.blobs.stat(sha);
    },
    read: (sha, start, end) => this.d.blobs.read(sha, start, end),
  };

  /** Hop v2 for agents posting directly (decision 495), when the wiring sets it. */
  wire2?: Wire2Backend;

  /** When each token's last use was written here: at most one write a minute per token. */
  private readonly usesWritten = new Map<string, number>();

  /** A revoked token, or a rotated-out one past its grace period, no longer authenticates. */
  async authenticate(token: string): Promise<Peer | null> {
    const hash = sha256Hex(token);
    const row = await this.d.store.peerByToken(hash);
    const now = this.d.clock.now();
    if (!row || !peerLive(row, now)) return null;
    const written = this.usesWritten.get(hash) ?? row.lastUsedAt ?? 0;
    if (now - written >= USE_WRITE_MS) {
      this.usesWritten.set(hash, now);
      // `hub peer list` shows the last use; a store that cannot take it now misses one mark, no request fails
      await this.d.store.commit({ peerUses: [{ tokenSha256: hash, at: now }] }).catch(() => {});
    }
    const peer: Peer = { name: row.name, sites: row.sites };
    this.tokenOf.set(peer, hash);
    this.keyOf.set(peer, row.publicKey ?? null);
    return peer;
  }

  /** The token hash each authenticated peer came with, for writes about that token. */
  private readonly tokenOf = new WeakMap<Peer, string>();
  /** The enrolled key of the token's peer (`hub peer add --key`), null for an older relay. */
  private readonly keyOf = new WeakMap<Peer, string | null>();

  /** A relay's own status: kept in the row of the token it came with, so every hub shows it. */
  async acceptStatus(peer: Peer, status: RelayStatus): Promise<void> {
    const tokenSha256 = this.tokenOf.get(peer);
    if (!tokenSha256) return;
    await this.d.store.commit({ peerStatuses: [{ tokenSha256, status, at: this.d.clock.now() }] });
  }

  /** A peer (a relay, or an agent posting directly) acts only for its own sites (S4 in docs/architecture.md#invariants). */
  async accept(
    peer: Peer,
    bundles: readonly Uint8Array[],
    clocks?: SourceClocks,
    custody?: Custody,
  ): Promise<Receipt[]> {
    this.d.checkDisk?.(bundles.reduce((n, b) => n + b.length, 0));
    const scoped = scopeBatch(peer, bundles, this.name);
    if (scoped.refused.length > 0) this.d.onForeignSite?.(peer.name, scoped.refused.length);
    // signed terms over plain ones where a chain verifies (decision 290)
    const sourceClocks = this.d.custodyClocks
      ? await this.d.custodyClocks.of(
          { name: peer.name, publicKey: this.keyOf.get(peer) ?? null },
          scoped.allowed,
          clocks,
          custody,
        )
      : clocks;
    // A relay enrolled without a key vouches for no clock it passes on (decision 415); an agent posting
    // directly (`site/agent`) states its own clock, which it signs its bundles with.
    const unkeyed = sourceClocks && !this.keyOf.get(peer) && !peer.name.includes('/');
    const pathClocks = unkeyed
      ? Object.assign((s: string) => sourceClocks(s), { unattested: true })
      : sourceClocks;
    const inner =
      scoped.allowed.length > 0
        ? await this.d.ingest.accept(peer.name, scoped.allowed, pathClocks, peer.sites)
        : [];
    return scoped.complete(inner);
  }

  async downlink(peer: Peer, q: DownlinkQuery): Promise<{ bundles: Uint8Array[]; cursor: string }> {
    const { store, clock } = this.d;
    const after = Number(q.after ?? '0');
    const rows = await store.readDownlink(q.for, after, q.limit);
    const now = clock.now();
    const live = rows.filter((r) => r.expiresAt > now);
    if (live.length < rows.length) this.d.onExpiredDownlink?.(rows.length - live.length);
    const delivered: PlanRequestRow[] = [];
    const approvals: ApprovalRow[] = [];
    // A relay (not an agent pulling itself, `site/agent`) that pulls a request holds it for the site:
    // the request's journey shows it there (docs/decisions/560-plan-request-states.md).
    const relay = peer.name.includes('/') ? null : peer.name;
    for (const r of live) {
      if (!r.requestId) continue;
      const req = await store.getPlanRequest(r.requestId);
      const atRelay = relay && req?.relayAt == null ? { relayAt: now, relay } : {};
      // An agent that confirms what it receives says itself when a request arrived (decision 230): a
      // relay's pull is not delivery, so only an older agent's requests are marked delivered here.
      const agentSays = req ? (await store.getAgent(req.site, req.agent))?.confirmsRequests === true : false;
      if (req?.state === 'pending' && !agentSays)
        delivered.push({ ...req, ...atRelay, state: 'delivered', deliveredAt: now });
      else if (req?.state === 'pending' && relay && req.relayAt == null)
        delivered.push({ ...req, ...atRelay });
      // An approval's control bundle carries its approval id as the row's request id. Likewise, an agent
      // that confirms says itself when an approval arrived (its apply record, decision 300).
      const approval = req ? null : await store.getApproval(r.requestId);
      if (approval && approval.deliveredAt === null && approval.confirmBy == null)
        approvals.push({ ...approval, deliveredAt: now });
    }
    if (delivered.length + approvals.length > 0) {
      // Only the first pull moves them (another hub may serve another relay of the site): announced once.
      const moved = await store.markDelivered({ requests: delivered, approvals });
      if (moved.requests.length > 0) this.d.onDelivered?.(moved.requests);
    }
    const last = rows.at(-1);
    return { bundles: live.map((r) => r.bytes), cursor: String(last ? last.seq : after) };
  }

  async uploadFinished(_peer: Peer | null, upload: FinishedUpload): Promise<void> {
    const { store, clock } = this.d;
    const path = await this.d.blobs.adopt(upload.sha256, upload.path);
    const now = clock.now();
    await store.commit({
      blobs: [
        {
          sha256: upload.sha256,
          size: upload.size,
          contentType: upload.metadata.contentType ?? 'application/octet-stream',
          path,
          receivedAt: now,
        },
      ],
    });
    // A newly held blob lets the agent delete its copy: re-ack each document that announced it.
    const downlink = [];
    for (const docId of await store.docsAnnouncing(upload.sha256)) {
      const parts = parseDocId(docId);
      if (!parts) continue; // announcements are stored only for documents ingest took
      const { site, agent } = parts;
      const heads = await this.d.replicas.heads(docId);
      const held = await store.heldBlobsFor(docId);
      const { row, signed } = this.d.ingest.acks.row({ site, agent }, docId, heads, held, now);
      await signed;
      downlink.push(row);
    }
    if (downlink.length > 0) await store.commit({ downlink });
  }

  /** `GET /v1/health`: 503 with the reason while the store cannot be reached (a load balancer routes around it). */
  async health(): Promise<StoreHealth> {
    return this.d.health ? this.d.health() : { ok: true };
  }
}
