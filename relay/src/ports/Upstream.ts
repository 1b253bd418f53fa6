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
}
