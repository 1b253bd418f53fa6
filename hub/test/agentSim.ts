import * as A from '@automerge/automerge';
import { type HeartbeatBackend, heartbeatChange } from '@driftline/hop/heartbeat';
import {
  type AgentDoc,
  type BundleHeader,
  cryptoRandomBytes,
  docId,
  encodeBundle,
  generateSigningKeyPair,
  monotonicUlid,
  type PlanStatus,
  packDocEntry,
  publicKeyToText,
  type SigningKeyPair,
} from '@driftline/protocol';

/**
 * A small stand-in for the edge agent: a real Automerge document in protocol's AgentDoc shape and
 * signed doc-delta bundles of `saveSince(doc, ackedHeads)`, as the agent sends them. Runs and cells are
 * packed as the agent writes them, or maps (`packed: false`) as agents before decision 008 wrote them.
 */
export class AgentSim {
  doc: A.Doc<AgentDoc>;
  acked: A.Heads = [];
  private readonly ids: () => string;

  private constructor(
    readonly site: string,
    readonly agent: string,
    readonly keys: SigningKeyPair,
    readonly clock: { now: () => number },
    readonly epoch = 1,
    readonly packed = true,
  ) {
    this.ids = monotonicUlid(() => clock.now(), cryptoRandomBytes);
    this.doc = A.from<AgentDoc>({ site, agent, epoch, cells: {}, runs: {} } as unknown as AgentDoc);
  }

  static async create(
    site: string,
    agent: string,
    clock: { now: () => number },
    epoch = 1,
    opts: { packed?: boolean } = {},
  ): Promise<AgentSim> {
    return new AgentSim(site, agent, await generateSigningKeyPair(), clock, epoch, opts.packed ?? true);
  }

  get docId(): string {
    return docId(this.site, this.agent, this.epoch);
  }

  publicKeyText(): Promise<string> {
    return publicKeyToText(this.keys.publicKey);
  }

  /** Records one plan result for `environment/component`; returns its RunId. */
  plan(
    environment: string,
    component: string,
    status: PlanStatus = 'clean',
    opts: {
      planHash?: string;
      cadenceS?: number;
      detailBlob?: string;
      queueDepth?: number;
      /** More fields of the run's summary (`resources`, `checks`, `errorExcerpt`). */
      summary?: Record<string, unknown>;
      /** The run's and cell's reason (default `exit-1` for `failed`, none otherwise). */
      reason?: string;
      /** Counts over the status's defaults (`changes` that also found drift: `{ drift: 2 }`). */
      counts?: Partial<Record<'add' | 'change' | 'destroy' | 'replace' | 'import' | 'drift', number>>;
    } = {},
  ): string {
    const runId = this.ids();
    const at = this.clock.now();
    const iso = new Date(at).toISOString();
    const counts = {
      add: status === 'changes' ? 1 : 0,
      change: 0,
      destroy: 0,
      replace: 0,
      import: 0,
      drift: status === 'drift' ? 1 : 0,
      ...opts.counts,
    };
    const key = `${environment}/${component}`;
    const outcome =
      status === 'failed'
        ? { reason: opts.reason ?? 'exit-1' }
        : { counts, ...(opts.reason ? { reason: opts.reason } : {}) };
    const pack = <T extends object>(v: T): T =>
      this.packed ? (new A.ImmutableString(packDocEntry(v as never)) as unknown as T) : v;
    this.doc = A.change(this.doc, (d) => {
      d.runs[runId] = pack({
        runId: runId as never,
        environment,
        component,
        summary: {
          component,
          environment,
          status,
          ...outcome,
          startedAt: new Date(at - 1000).toISOString(),
          finishedAt: iso,
          ...(opts.planHash ? { planHash: opts.planHash as never } : {}),
          ...(opts.summary ?? {}),
        },
        ...(opts.detailBlob ? { detailBlob: opts.detailBlob as never } : {}),
        recordedAt: at,
      });
      d.cells[key] = pack({
        environment,
        component,
        runId: runId as never,
        status,
        ...outcome,
        plannedAt: at,
        confirmations: 0,
        ...(opts.planHash ? { planHash: opts.planHash as never } : {}),
      });
      const cadence = { ...(d.facts?.cadenceS ?? {}), [key]: opts.cadenceS ?? 3600 };
      d.facts = {
        version: '0.1.0',
        cadenceS: cadence,
        contactIntervalS: 600,
        queueDepth: opts.queueDepth ?? 1,
        reportedAt: at,
      };
    });
    return runId;
  }

  /**
   * The agent found the same plan again: as the real agent does, it sends no new run, only moves the
   * cell's `plannedAt` and counts the confirmation.
   */
  confirm(environment: string, component: string): void {
    const key = `${environment}/${component}`;
    const at = this.clock.now();
    this.doc = A.change(this.doc, (d) => {
      const raw = d.cells[key] as unknown;
      const cell = (
        raw instanceof A.ImmutableString ? JSON.parse(raw.val) : JSON.parse(JSON.stringify(raw))
      ) as { plannedAt: number; confirmations: number; unchangedSince?: number };
      const next = {
        ...cell,
        unchangedSince: cell.unchangedSince ?? cell.plannedAt,
        plannedAt: at,
        confirmations: cell.confirmations + 1,
      };
      d.cells[key] = (this.packed ? new A.ImmutableString(packDocEntry(next as never)) : next) as never;
    });
  }

  /**
   * As an agent after decision 330 does once its hub reads them: the same plan again written apart
   * from the cell, as `confirmed[key]` (`{at, n, commit?}`); `declare` only adds the empty map.
   */
  confirmApart(environment: string, component: string, opts: { commit?: string } = {}): void {
    const key = `${environment}/${component}`;
    const at = this.clock.now();
    this.doc = A.change(this.doc, (d) => {
      const doc = d as unknown as { confirmed?: Record<string, unknown> };
      if (!doc.confirmed) doc.confirmed = {};
      const prev = doc.confirmed[key] as A.ImmutableString | undefined;
      const n = prev ? (JSON.parse(prev.val) as { n: number }).n + 1 : 1;
      doc.confirmed[key] = new A.ImmutableString(
        JSON.stringify({ at, n, ...(opts.commit ? { commit: opts.commit } : {}) }),
      );
    });
  }

  /**
   * As an agent on hop v2 after decision 500 writes a quiet round: the confirmations of `keys` as the
   * heartbeat change (hop's rule, the one the hub rebuilds). Answers the change's hash.
   */
  heartbeat(keys: readonly string[]): string {
    const at = this.clock.now();
    const made = heartbeatChange(
      A.getBackend(this.doc) as unknown as HeartbeatBackend,
      this.docId,
      keys.map((key) => ({ key, at })),
    );
    if (!made) throw new Error('heartbeat: the document has no confirmed map');
    [this.doc] = A.applyChanges(this.doc, [made.bytes]);
    return made.hash;
  }

  /** Adds the empty `confirmed` map: says this agent writes confirmations apart once told (decision 330). */
  declareConfirmed(): void {
    this.doc = A.change(this.doc, (d) => {
      const doc = d as unknown as { confirmed?: Record<string, unknown> };
      if (!doc.confirmed) doc.confirmed = {};
    });
  }

  /**
   * As the agent does (decision 230): says in its document that hub plan request `requestId` arrived now,
   * or with `null` only that it confirms what it receives (the empty `requests` map).
   */
  received(requestId: string | null, environment = 'prod', component = 'net', state = 'accepted'): void {
    const at = this.clock.now();
    this.doc = A.change(this.doc, (d) => {
      const doc = d as unknown as { requests?: Record<string, unknown> };
      if (!doc.requests) doc.requests = {};
      if (requestId) doc.requests[requestId] = { environment, component, state, receivedAt: at };
    });
  }

  /**
   * As the agent does when it starts the plan it runs for request `requestId` (decision 560): stamps the
   * request with when that run started, on its own clock.
   */
  started(requestId: string): void {
    const at = this.clock.now();
    this.doc = A.change(this.doc, (d) => {
      const entry = (d as unknown as { requests: Record<string, Record<string, unknown>> }).requests[
        requestId
      ];
      if (!entry) throw new Error(`started: request ${requestId} was not received`);
      entry.startedAt = at;
    });
  }

  /**
   * As the agent does when the plan it ran for request `requestId` finishes (decision 300): stamps the
   * request with the run (for a plan found unchanged, the run its cell confirms) and when it finished.
   */
  answered(requestId: string, runId: string): void {
    const at = this.clock.now();
    this.doc = A.change(this.doc, (d) => {
      const entry = (d as unknown as { requests: Record<string, Record<string, unknown>> }).requests[
        requestId
      ];
      if (!entry) throw new Error(`answered: request ${requestId} was not received`);
      entry.runId = runId;
      entry.answeredAt = at;
    });
  }

  /** A signed doc-delta of everything since the acknowledged heads (or since `from`). */
  async delta(
    opts: {
      from?: A.Heads;
      blobs?: { sha256: string; size: number; runId?: string }[];
      signWith?: CryptoKey;
      source?: { site: string; agent: string };
      doc?: string;
      /** Sent in place of the document's changes. */
      changes?: Uint8Array<ArrayBuffer>;
    } = {},
  ): Promise<Uint8Array> {
    const changes =
      opts.changes ?? (A.saveSince(this.doc, opts.from ?? this.acked) as Uint8Array<ArrayBuffer>);
    const header: BundleHeader & { kind: 'doc-delta' } = {
      id: this.ids() as never,
      kind: 'doc-delta',
      source: (opts.source ?? { site: this.site, agent: this.agent }) as never,
      destination: 'hub',
      created: this.clock.now(),
      lifetimeS: 86_400,
      priority: 'status',
      doc: opts.doc ?? this.docId,
      heads: A.getHeads(this.doc),
    };
    return encodeBundle(
      header,
      {
        epoch: this.epoch,
        changes,
        blobs: (opts.blobs ?? []).map((b) => ({
          sha256: b.sha256 as never,
          size: b.size,
          contentType: 'application/vnd.driftline.plan-detail+json;encoding=br',
          ...(b.runId ? { runId: b.runId as never } : {}),
        })),
      },
      opts.signWith ?? this.keys.privateKey,
    );
  }
}

/** A clock tests move by hand. */
export class TestClock {
  constructor(public t = Date.parse('2025-06-01T12:00:00.000Z')) {}
  now = (): number => this.t;
  advance(ms: number): void {
    this.t += ms;
  }
}
