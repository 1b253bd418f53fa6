/**
 * What one push or pull cycle takes (`SyncDeps`) and gives back (`PushOutcome`, `PullOutcome`): the
 * engine (`SyncEngine.ts`), its downlink handler (`downlinkHandler.ts`) and the loop that drives it
 * (`SyncLoop.ts`) all name these, so they live apart from each of them.
 */

import type {
  ContactWindowsPayload,
  ControlPayload,
  PayloadOf,
  PlanRequestPayload,
  Receipt,
} from '@driftline/protocol';
import type { Ledger } from '../../ports/Ledger.js';
import type { Logger } from '../../ports/Logger.js';
import type { Uplink } from '../../ports/Uplink.js';

/** A hub-relayed approval as it arrives on the downlink: the approval itself is unchecked here. */
export type ApprovalPayload = Extract<ControlPayload, { type: 'approval' }>;

export interface SyncDeps {
  site: string;
  agent: string;
  store: Ledger;
  /** Upstreams in order of preference: pushes go to the first reachable one, pulls to every one. */
  uplinks: readonly Uplink[];
  /** What this agent's hop v2 pushes carried, for the hub's v2 acks that name them (decision 495). */
  wire2?: Wire2Acks;
  privateKey: CryptoKey;
  /** The hub's key pinned in the local config: acks and plan requests must carry its signature (S4). */
  hubPublicKey: CryptoKey;
  /**
   * true when the local config lists this cell (and, for a ref, the component's `source.refs` allow it):
   * the hub cannot make the agent run anything else (S3).
   */
  allowsCell(environment: string, component: string, ref?: string): boolean;
  onPlanRequest(request: PlanRequestPayload): void;
  newBundleId(): string;
  now(): number;
  log: Logger;
  /** Bundle lifetime at relays, seconds. */
  lifetimeS?: number;
  /**
   * This site's short id (`wire2SiteId`), `to` of the hub's compact publication manifests (decision 505):
   * one naming another site is passed over; unset, all are.
   */
  siteShortId?: number;
  /** A hub-signed `blob` manifest (a publication); unset: such manifests are ignored. */
  onBlobManifest?(manifest: PayloadOf<'blob'>): void;
  /**
   * A hub-relayed approval (the hub's signature checked; the approver's is the handler's to check against
   * the keys the local config pins). Awaited before the downlink cursor moves on; unset: refused.
   */
  onApproval?(approval: ApprovalPayload): Promise<void>;
  /** The hub's declared contact windows for this site (signature checked; decision 590); unset: ignored. */
  onContactWindows?(windows: ContactWindowsPayload): void;
  /**
   * With nothing pending, whether a presence is owed now (a contact window opened since `lastPushedAt`,
   * the last push an upstream took): then the agent writes it (`presentAt`) and pushes it, signed, and the
   * hub counts it as contact (`WindowAim.presenceDue`, docs/decisions/450-contact-the-agent-proves.md).
   */
  presenceDue?(lastPushedAt: number | null, now: number): boolean;
}

/** What a hop v2 push the hub acknowledged by sequence and `tip` carried; null: not this agent's. */
export interface Wire2Acks {
  /** `heartbeats`: the ack says the hub rebuilds heartbeats (decision 500). */
  acked(upTo: number, tip: Uint8Array, heartbeats?: boolean): { doc: string; heads: string[] } | null;
}

/** An upstream that answered and refused this agent's credential (401/403). */
export interface Refusal {
  upstream: string;
  reason: string;
}

export type PushOutcome =
  | { kind: 'idle' }
  | { kind: 'pushed'; upstream: string; receipts: Receipt[]; bytes: number }
  | {
      kind: 'unreachable';
      errors: string[];
      /** Upstreams that answered and refused this agent's credential (401/403): reached, not unreachable. */
      refusals?: Refusal[];
    }
  /** The hub rejected this agent's bundles: nothing goes up for `retryInMs`, unless a hub ack comes first. */
  | { kind: 'held'; code: string; retryInMs: number };

export interface PullOutcome {
  upstream: string | null;
  acks: number;
  planRequests: number;
  /** Approvals handed to `onApproval` (each counted, applied or refused there). */
  approvals: number;
  refused: number;
  /** Hub rejections of this agent's bundles recorded. */
  rejections: number;
  /** A hub ack outdated the rejections: the refused changes may go up at once. */
  resumed: boolean;
  errors: string[];
  /** Upstreams that refused this agent's credential (401/403, issue 42); absent: none. */
  refusals?: Refusal[];
  /** Upstreams whose answer was cut for making no progress (`sync.stallS`, decision 410); absent: none. */
  stalled?: string[];
  /** The upstream held this pull open as asked (it answers `wait`); absent: it did not, or none was asked. */
  held?: boolean;
  /** Seconds it said it held (or would hold) the pull, and how many held pulls it keeps at once (decision 340). */
  heldS?: number | undefined;
  keep?: number | undefined;
  /** The longest hold it stated (decision 320). */
  holdMaxS?: number | undefined;
}
