import type { ClockEstimate, DownlinkQuery, Receipt, RelayRefusal, RelayStatus } from '@driftline/protocol';
import type { DownlinkWaiters, Holder, WaitEnd } from '../http/downlinkWaiters.js';
import type { Peer } from './Peer.js';
import type { Wire2Backend } from './Wire2Backend.js';

export type { Peer } from './Peer.js';

/**
 * What a node (relay or hub) must provide for `@driftline/hop` to serve the hop API
 * (docs/architecture.md#wire): `POST /v1/bundles`, `GET /v1/bundles`, `/v1/uploads/` (tus), `GET /v1/blobs/:sha256`,
 * `GET /v1/health`, `GET /metrics`. hop owns HTTP, validation, size limits, error rendering, tus and
 * Range serving; the backend owns custody, merge and storage.
 */
export interface HopBackend {
  readonly role: 'relay' | 'hub';
  /** Shown in receipts' `by` and in `/v1/health`. */
  readonly name: string;
  readonly version: string;

  /** The peer a bearer token belongs to, or null when it is unknown or revoked. Tokens are stored hashed. */
  authenticate(token: string): Promise<Peer | null>;

  /**
   * Takes custody of a batch (already framed-decoded; each element is one encoded bundle, untrusted).
   * Resolves only after the node's durable commit (D1): one receipt per bundle, in order.
   * Duplicates answer `duplicate`, never a second copy (D2). Out of disk: throw `WireError('insufficient-storage')`
   * with nothing half-written. `clocks` gives each bundle source's clock minus this node's, when the
   * path told it (docs/decisions/070-clock-offsets.md); a backend may ignore it. `custody`: the batch's
   * signed timing records (decision 290); a backend may ignore them too.
   */
  accept(
    peer: Peer,
    bundles: readonly Uint8Array[],
    clocks?: SourceClocks,
    custody?: Custody,
  ): Promise<Receipt[]>;

  /** Bundles addressed to `query.for` after `query.after`, at least once; `cursor` goes back as `after` next time. */
  downlink(peer: Peer, query: DownlinkQuery): Promise<{ bundles: Uint8Array[]; cursor: string }>;

  /**
   * Holds an empty downlink pull that asked to wait (`wait`): resolves when downlink for `site` may have
   * arrived, `ms` passed, or `signal` aborted (the request went away). Absent: pulls are answered at
   * once and say nothing of holding (docs/decisions/270-control-first.md). With `holder`, a newer pull of
   * the same peer may supersede this one: it then resolves `'superseded'` and is answered empty
   * (docs/decisions/340-no-gap-between-held-pulls.md).
   */
  waitForDownlink?(
    site: string,
    ms: number,
    signal: AbortSignal,
    holder?: Holder,
  ): Promise<WaitEnd | undefined>;

  /**
   * A downlink watch (`POST /v1/downlink/watch`): the sites of `cursors` with downlink after the cursor
   * named, at once when there are some, else when the first arrives, `ms` passed or `signal` aborted
   * (then what there is: often none). Absent: this node holds no watch and does not state `watchS`
   * (docs/decisions/620-one-watch-for-all-sites.md).
   */
  watchDownlink?(cursors: ReadonlyMap<string, number>, ms: number, signal: AbortSignal): Promise<string[]>;

  /** Longest watch held, seconds, stated as `watchS` in `GET /v1/peer` (with `watchDownlink`). */
  readonly watchMaxS?: number;

  /** What each holder's last answer carried (with `keepHeld`, decision 340). */
  readonly held?: Pick<DownlinkWaiters, 'answeredUpTo' | 'noteAnswered' | 'heldRepeat'>;

  /** How many held pulls of one peer and site it keeps (`keep`, decision 340); absent: one. */
  readonly keepHeld?: number;

  /**
   * Longest hold granted, seconds, stated with every held answer so agents ask for it
   * (docs/decisions/320-bytes-on-a-costly-link.md). Absent: 60, the bound before that decision.
   */
  readonly maxHoldS?: number;

  /** Where completed, verified blobs are read from for `GET /v1/blobs/:sha256`. */
  blobs: BlobReader;

  /**
   * Called when a tus upload completes. `sha256` is the digest the uploader announced in
   * `Upload-Metadata`; hop has already checked the bytes match it. The backend moves the file into
   * its blob store and records it durably before hop answers the final PATCH.
   */
  uploadFinished(peer: Peer | null, upload: FinishedUpload): Promise<void>;

  /**
   * Bundles of `site`'s agents this node's upstream refused for good, sent with each `GET /v1/bundles`
   * answer for that site (`REFUSALS_HEADER`, at most 16), so the agents show them and send again soon.
   * Absent: none (the hub answers with signed rejections on the downlink instead).
   */
  refusalsFor?(site: string): RelayRefusal[];

  /**
   * Keeps a downstream relay's own health (`POST /v1/status`, already validated), the latest per peer.
   * Absent: the node keeps none and the route answers 404.
   */
  acceptStatus?(peer: Peer, status: RelayStatus): Promise<void>;

  /** Hop v2 on this node (docs/decisions/495-hop-v2-on-the-agent-link.md); absent: `/v2` answers 404. */
  readonly wire2?: Wire2Backend;

  /** Readiness for `/v1/health` (e.g. false while the store is migrating). */
  health(): Promise<{ ok: boolean; detail?: string }>;
}

/**
 * The clock of a bundle's source (`site/agent`) minus this node's clock, composed along the path the
 * bundle came (docs/decisions/070-clock-offsets.md), or null when some hop of it gave no estimate.
 */
export type SourceClocks = (source: string) => ClockEstimate | null;

/**
 * The signed timing chain of a batch (docs/decisions/290-signed-hop-chain.md): its `driftline-custody`
 * records, still unread and unverified, and the posting peer's own clock minus this node's (its
 * `driftline-clock`, on its own authenticated connection), which the last term of a chain needs.
 */
export interface Custody {
  records: string[];
  peerClock: ClockEstimate | null;
}

export interface BlobReader {
  /**
   * Metadata of a complete blob `peer` may read, or null (404) when there is none or it is not theirs
   * to read (a blob another peer uploaded). hop always passes the requesting peer; a backend's own
   * callers may leave it out. `etag` must be strong (RFC 9110 §8.8.3).
   */
  stat(sha256: string, peer?: Peer): Promise<{ size: number; etag: string; mtimeMs: number } | null>;
  /** A readable stream of bytes `[start, end]` inclusive. */
  read(sha256: string, start: number, end: number): NodeJS.ReadableStream;
}

export interface FinishedUpload {
  /** Path of the completed upload file on local disk. */
  path: string;
  size: number;
  sha256: string;
  /** Upload-Metadata other than sha256 (e.g. contentType, runId, bundle id). */
  metadata: Record<string, string>;
}
