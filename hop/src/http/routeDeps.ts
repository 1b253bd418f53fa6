import type { HopMetrics } from '../metrics.js';
import type { HopBackend } from '../ports/HopBackend.js';
import type { PeerClocks } from './clocks.js';
import type { OpenCredentials } from './openCredentials.js';
import type { SeqWindows } from './seqWindows.js';

/**
 * What the hop handlers use, built once by `createHopServer`. The route table (`routes.ts`) and the
 * handlers it lists both name it, so it lives apart from the table.
 */
export interface HopRouteDeps {
  backend: HopBackend;
  metrics: HopMetrics;
  limits: { maxBatchBytes: number; maxBundlesPerBatch: number };
  peerClocks: PeerClocks;
  /** Tokens of held pulls, checked again while they are open (decision 411). */
  credentials?: OpenCredentials;
  /** Hop v2 senders' sequence windows (decision 490). */
  windows: SeqWindows;
  /** The node's clock, for the stamps of v2 custody answers. */
  now: () => number;
  /** The server takes h2c on its port (stated in the v2 registration's answer to agents that read it). */
  h2c: boolean;
}
