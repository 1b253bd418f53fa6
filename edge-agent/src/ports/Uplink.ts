import type { Receipt, RelayRefusal } from '@driftline/protocol';

/** The outcome of one request to an upstream. `retryable` false means: do not send this unchanged again. */
export type UplinkResult<T> =
  | { ok: true; value: T }
  | {
      ok: false;
      error: string;
      retryable: boolean;
      status?: number;
      /** A downlink answer cut for making no progress (`sync.stallS`, docs/decisions/410-independent-downlinks.md). */
      stalled?: boolean;
    };

export interface BlobToUpload {
  sha256: string;
  size: number;
  contentType: string;
  runId?: string;
  data: Uint8Array;
  /** Set when an upstream took this blob before and the hub has not acknowledged it since. */
  previousUpload?: { at: number; upstream: string };
}

/** One answered downlink pull: what came, the cursor to send back, and how the upstream holds pulls. */
export interface DownlinkPage {
  bundles: Uint8Array[];
  cursor: string;
  held?: boolean;
  /** Seconds the upstream said it held this pull, and how many it keeps at once (decision 340). */
  heldS?: number;
  keep?: number;
  /** The longest hold the upstream stated (decision 320); absent: none stated. */
  holdMaxS?: number;
  /** What a relay's upstream refused of this site's bundles (decision 240); absent: nothing. */
  refusals?: RelayRefusal[];
}

/**
 * One upstream (a relay, or the hub directly) as the agent sees it: the hop API, client side.
 * Adapters: `HttpUplink` (through a hop server), `MemoryUplink` (straight to a `HopBackend`); both pass
 * `runUplinkContract` (test/uplinkContract.ts).
 */
export interface Uplink {
  readonly url: string;
  /** Cheap reachability check (`GET /v1/health`): a down link costs this and nothing else. */
  probe(): Promise<UplinkResult<void>>;
  /** `POST /v1/bundles` with a framed batch; one receipt per bundle. */
  postBundles(batch: Uint8Array): Promise<UplinkResult<Receipt[]>>;
  /**
   * `GET /v1/bundles?for=<site>&after=<cursor>[&wait=<s>]`. With `hold`, an upstream that can holds the
   * pull open until downlink arrives or `waitS` passes, and says so (`held`); others answer at once.
   */
  pullDownlink(
    site: string,
    after: string | undefined,
    hold?: { waitS: number; signal?: AbortSignal; holder?: string },
  ): Promise<UplinkResult<DownlinkPage>>;
  /**
   * Ends every exchange in progress and refuses new ones (the agent's stop): each fails `aborted`, and what
   * it carried goes again at the next start. Absent: exchanges end by themselves.
   */
  abort?(): void;
  /** Resumable upload (tus) of one blob; resumes where an earlier attempt, even in another process, stopped. */
  uploadBlob(
    blob: BlobToUpload,
    onProgress?: (sent: number, total: number) => void,
    signal?: AbortSignal,
  ): Promise<UplinkResult<void>>;
}
