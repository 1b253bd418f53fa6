import type { HopFailure } from '@driftline/hop/client';
import type { ClockEstimate, Receipt } from '@driftline/protocol';

/**
 * The next hop toward the hub (another relay or the hub), spoken to over the hop API. Adapters:
 * `HttpUpstream` (the relay), `MemoryUpstream` (tests); both pass `runUpstreamContract`.
 */
export interface Upstream {
  readonly name: string;
  /** `clocks`: each source's clock minus this relay's, sent along so the upstream can compose it with its own. */
  postBatch(
    bundles: readonly Uint8Array[],
    clocks?: ReadonlyMap<string, ClockEstimate>,
  ): Promise<{ ok: true; receipts: Receipt[]; bytes: number } | HopFailure>;
  pullDownlink(
    site: string,
    after: string | undefined,
    limit: number,
  ): Promise<{ ok: true; bundles: Uint8Array[]; cursor: string; bytes: number } | HopFailure>;
  /**
   * One held watch over every site's downlink (`POST /v1/downlink/watch`, decision 620): the sites with
   * downlink after the cursor named, at once or when the first arrives within `waitS`. Absent, or 404:
   * the upstream holds none, and its downlink is pulled site by site every interval.
   */
  watchDownlink?(
    cursors: ReadonlyMap<string, string>,
    waitS: number,
    signal?: AbortSignal,
  ): Promise<{ ok: true; sites: string[]; refused: string[] } | HopFailure>;
}
