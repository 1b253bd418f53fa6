import type { Clock } from '../ports/Clock.js';
import type { CellRow, HeldReason, IngestStore, PlanRequestRow, RunRow } from '../ports/HubStore.js';
import type { IdGen } from '../ports/IdGen.js';
import type { DocReplicas } from './DocReplicas.js';
import type { RefusalReason } from './verify.js';

/** What ingest needs, and what it tells listeners after each commit. */

export interface IngestDeps {
  store: IngestStore;
  clock: Clock;
  ids: IdGen;
  replicas: DocReplicas;
  hubPrivateKey: CryptoKey;
  webhookUrls: readonly string[];
  log: { warn(obj: object, msg: string): void };
  /** Counts refusals by reason, and results merged. */
  count: {
    refused(reason: RefusalReason): void;
    merged(runs: number): void;
    /** A path clock estimate held back (docs/decisions/230-time-a-hop-cannot-forge.md). */
    clockHeld?(reason: HeldReason): void;
    /** A v2 push's heartbeat rebuilt into the agent's change, or refused (decision 500). */
    heartbeat?(outcome: 'rebuilt' | 'refused'): void;
    /** Document entries refused for their key (decision 570). */
    entriesRefused?(n: number): void;
  };
  ackLifetimeS?: number;
  /** Documents taken in one transaction at most (`Ingest`'s parts); `PART_DOCS` by default. */
  partDocs?: number;
}

/** What one batch changed, after its commit: for live events. */
export interface Committed {
  cells: CellRow[];
  runs: RunRow[];
  sites: string[];
  planRequests: PlanRequestRow[];
  /** The `bundles` map (the agent's publication delivery states) of each document whose map changed. */
  deliveries: { docId: string; site: string; agent: string; states: unknown }[];
}
