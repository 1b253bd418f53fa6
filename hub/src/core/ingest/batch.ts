import { type Receipt, siteCellKey } from '@driftline/protocol';
import type {
  AgentRow,
  ApprovalRow,
  CellKeyQuery,
  CellRow,
  IngestStore,
  PlanRequestRow,
  SiteRow,
  WriteSet,
} from '../../ports/HubStore.js';
import type { Committed } from '../ingestTypes.js';
import { readCell } from '../refCells.js';
import type { Refusal } from '../rejections.js';
import type { Wire2Pushed } from '../verify.js';
import type { HeldAck } from './deferredAcks.js';

/** The parts of the write set every batch fills (the rest come from the maps below at commit). */
export type BatchWrites = Required<
  Pick<WriteSet, 'bundles' | 'docChunks' | 'runs' | 'history' | 'announcements' | 'webhooks' | 'downlink'>
>;

/** The key of a site's cell in the batch's maps (a document's own cell keys omit the site). */
export const batchCellKey = siteCellKey;

/**
 * What one ingest batch has read and decided so far. Each step adds to it; `commit` writes it in one
 * transaction (D1) and `events` tells listeners what changed. Rows read from the store are cached here
 * so that every bundle of the batch sees the writes of the bundles before it.
 */
export class Batch {
  readonly w: BatchWrites = {
    bundles: [],
    docChunks: [],
    runs: [],
    history: [],
    announcements: [],
    webhooks: [],
    downlink: [],
  };
  /** Agent rows read (and updated in place) by `site/agent`. */
  readonly agents = new Map<string, AgentRow>();
  /** Cells as the batch knows them (null: none stored), by `batchCellKey`. */
  readonly cells = new Map<string, CellRow | null>();
  /** Cells this batch replaces, by `batchCellKey`. */
  readonly changedCells = new Map<string, CellRow>();
  readonly sites = new Map<string, SiteRow>();
  /** Open plan requests of a site, read once per batch. */
  readonly openRequests = new Map<string, PlanRequestRow[]>();
  /** Requests this batch moves (delivered by the agent's word, running, refused, expired, done), by request id. */
  readonly doneRequests = new Map<string, PlanRequestRow>();
  /** Plan requests the agents of this batch's documents say they received (decision 230), by request id. */
  readonly confirmations = new Map<
    string,
    {
      agent: string;
      state: string;
      receivedAt: number;
      runId?: string;
      answeredAt?: number;
      /** When the agent started the plan that answers it (decision 560). */
      startedAt?: number;
    }
  >();
  /** Documents that took at least one bundle, with the heads after the merge (they are acked). */
  /** `readsConfirmed`: the document has a `confirmed` map, so its ack says the hub reads it (decision 330). */
  readonly touchedDocs = new Map<
    string,
    {
      site: string;
      agent: string;
      heads: string[];
      readsConfirmed?: boolean;
      /** The agent writes heartbeat changes (decision 500): its v2 ack says the hub rebuilds them. */
      writesHeartbeats?: boolean;
      /** The last bundle taken was a hop v2 push: acked by a v2 message naming it (decision 495). */
      wire2?: Wire2Pushed | undefined;
    }
  >();
  /** Documents whose bundles claimed another agent: not acked. */
  readonly poisoned = new Set<string>();
  readonly deliveries: Committed['deliveries'] = [];
  readonly applies: NonNullable<WriteSet['applies']> = [];
  /** Approvals this batch marks delivered by the agent's word (decision 300), by approval id. */
  readonly approvals = new Map<string, ApprovalRow>();
  /** Refusals of bundles that name their agent: answered on the downlink (step 8 of docs/architecture.md#the-trip). */
  readonly refusals: Refusal[] = [];
  /** One receipt per bundle, by its index in the batch; null until a step decides. */
  readonly receipts: (Receipt | null)[];
  /**
   * Acks held for agents' next pushes as this batch leaves them, by `site\nagent` (null: none held):
   * applied to `Ingest.heldAcks` once the batch commits (decision 525).
   */
  readonly heldAcks = new Map<string, { site: string; agent: string; hold: HeldAck | null }>();
  private readonly lookups = new Map<string, Promise<AgentRow | null>>();

  constructor(
    readonly store: IngestStore,
    readonly now: number,
    size: number,
  ) {
    this.receipts = Array.from({ length: size }, () => null);
  }

  /** One lookup per agent per batch, shared by its bundles: they update the same row. */
  agent(site: string, agent: string): Promise<AgentRow | null> {
    const k = `${site}/${agent}`;
    let p = this.lookups.get(k);
    if (!p) {
      p = this.store.getAgent(site, agent).then((row) => {
        if (row) this.agents.set(k, row);
        return row;
      });
      this.lookups.set(k, p);
    }
    return p;
  }

  /** The cell as stored before this batch, or as an earlier document of this batch left it. */
  async cell(site: string, env: string, comp: string, ref?: string | null): Promise<CellRow | null> {
    const k = batchCellKey(site, env, comp, ref);
    if (!this.cells.has(k)) this.cells.set(k, await readCell(this.store, site, env, comp, ref));
    return this.cells.get(k) ?? null;
  }

  /**
   * Reads in one go the cells of `site` the batch does not know yet, so that `cell` then answers from
   * memory: a document's results name many cells, and a database store answers one read per round trip.
   */
  async prefetchCells(
    site: string,
    keys: readonly { environment: string; component: string; atRef?: string | null }[],
  ) {
    const missing = new Map<string, CellKeyQuery>();
    for (const k of keys) {
      const key = batchCellKey(site, k.environment, k.component, k.atRef);
      if (!this.cells.has(key))
        missing.set(key, {
          site,
          environment: k.environment,
          component: k.component,
          atRef: k.atRef ?? null,
        });
    }
    if (missing.size === 0) return;
    const rows = await this.store.getCells([...missing.values()]);
    [...missing.keys()].forEach((key, i) => {
      if (!this.cells.has(key)) this.cells.set(key, rows[i] ?? null);
    });
  }

  /** The site's row as this batch left it (a default one when the site is new). */
  async site(site: string): Promise<SiteRow | { unreachableNotifiedFor: null }> {
    return this.sites.get(site) ?? (await this.store.getSite(site)) ?? { unreachableNotifiedFor: null };
  }
}
