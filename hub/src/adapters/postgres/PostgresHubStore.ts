import { AsyncLocalStorage } from 'node:async_hooks';
import type pg from 'pg';
import { agentBrief } from '../../core/fleet/agentBrief.js';
import { sortPeers } from '../../core/peers.js';
import { marksStillTrue } from '../../core/sweepMarks.js';
import type {
  AgentBrief,
  AgentRow,
  ApplyRow,
  ApprovalRow,
  ApproverRow,
  AttentionQuery,
  AuditRow,
  BlobRow,
  CellHistoryRow,
  CellKeyQuery,
  CellPageQuery,
  CellRow,
  CellsOfRefQuery,
  CountScope,
  Deliveries,
  DownlinkRow,
  HubStore,
  PeerRow,
  PlanRequestRow,
  PruneResult,
  RefCellQuery,
  RefGateCellsQuery,
  RefGateQuery,
  RefKeysQuery,
  RefTotal,
  RetentionPolicy,
  RunQuery,
  RunRow,
  SessionRow,
  SitePageQuery,
  SiteRow,
  SweepMarks,
  UserRow,
  WebhookRow,
  WriteSet,
} from '../../ports/HubStore.js';
import type { PgDatabase, Stmt } from './PgDatabase.js';
import { PostgresReadModel } from './PostgresReadModel.js';
import { PG_PRUNE_STEP_CELLS, pruneInSteps } from './pruneSteps.js';
import { L, P, R } from './readStatements.js';
import { refDefaultKeys } from './refKeyStatements.js';
import { writeSteps } from './writeStatements.js';

type Row<T> = { row: T };
const json = (v: unknown) => JSON.stringify(v);
const bytes = (b: Buffer): Uint8Array => new Uint8Array(b.buffer, b.byteOffset, b.byteLength).slice();

interface DownlinkDbRow {
  seq: number;
  site: string;
  agent: string | null;
  kind: DownlinkRow['kind'];
  doc_id: string | null;
  request_id: string | null;
  replace_key: string | null;
  bytes: Buffer;
  expires_at: number;
}

/**
 * HubStore on PostgreSQL 15+. Same tables and semantics as the SQLite store (rows as json beside the
 * indexed columns); every `commit` is one transaction sent as one pipeline (D1); `prune` runs in bounded steps.
 * Several stores may share one {@link PgDatabase} (and its pool); `close` releases this one's share.
 */
export class PostgresHubStore implements HubStore {
  /** Inside `lockDocs`: the connection holding the documents' locks, on which `commit` then runs. */
  private readonly locked = new AsyncLocalStorage<{ client: pg.PoolClient; open: boolean }>();

  private readonly model: PostgresReadModel;
  constructor(private readonly db: PgDatabase) {
    db.retain();
    this.model = new PostgresReadModel(db);
  }
  cellCounts(scope: CountScope, keys?: readonly string[]) {
    return this.model.counts(scope, keys);
  }
  pageCells(q: CellPageQuery) {
    return this.model.page(q);
  }
  attentionCells(q: AttentionQuery) {
    return this.model.attention(q);
  }
  pageSites(q: SitePageQuery) {
    return this.model.sites(q);
  }
  advanceStale(now: number, limit: number) {
    return this.model.advanceStale(now, limit);
  }

  private async one<T>(s: Stmt, values: unknown[]): Promise<T | null> {
    const rows = await this.db.query<Row<T>>(s, values);
    return rows[0]?.row ?? null;
  }
  private async all<T>(s: Stmt, values: unknown[] = []): Promise<T[]> {
    return (await this.db.query<Row<T>>(s, values)).map((r) => r.row);
  }

  /**
   * One transaction. Inside `lockDocs` it runs on the connection holding the locks: should that
   * session have died (and its locks gone with it), the commit fails rather than land unguarded.
   */
  commit(w: WriteSet): Promise<void> {
    const held = this.locked.getStore();
    if (held?.open) return this.db.pipelineOn(held.client, writeSteps(w));
    return this.db.pipeline(writeSteps(w));
  }

  /**
   * Session advisory locks on the documents (namespace `LOCK.document`, keyed by `hashtext(docId)`),
   * taken in key order in one statement on a connection of their own, so two hubs locking overlapping
   * sets never wait on each other in a cycle; released when `fn` settles (or with the session).
   */
  async lockDocs<T>(docIds: readonly string[], fn: () => Promise<T>): Promise<T> {
    if (docIds.length === 0) return fn();
    return this.db.session(async (client) => {
      await client.query({ ...L.lockDocs, values: [[...new Set(docIds)]] });
      const held = { client, open: true };
      try {
        return await this.locked.run(held, fn);
      } finally {
        held.open = false;
        await client.query(L.unlockAll);
      }
    });
  }
  getAgent(site: string, agent: string) {
    return this.one<AgentRow>(R.getAgent, [site, agent]);
  }
  listAgents(site?: string) {
    return site ? this.all<AgentRow>(R.agentsOf, [site]) : this.all<AgentRow>(R.agents);
  }
  async listAgentBriefs() {
    const rows = await this.db.query<{ brief: AgentBrief | null; row: AgentRow | null }>(R.agentBriefs);
    return rows.map((r) => r.brief ?? agentBrief(r.row as AgentRow));
  }
  peerByToken(tokenSha256: string) {
    return this.one<PeerRow>(R.getPeer, [tokenSha256]);
  }
  async listPeers() {
    return sortPeers(await this.all<PeerRow>(R.peers));
  }
  async hasBundle(id: string) {
    return (await this.db.query(R.hasBundle, [id])).length > 0;
  }
  async docChunks(docId: string) {
    return (await this.db.query<{ bytes: Buffer }>(R.chunks, [docId])).map((r) => bytes(r.bytes));
  }
  getCell(site: string, environment: string, component: string) {
    return this.one<CellRow>(R.getCell, [site, environment, component]);
  }
  async getCells(keys: readonly CellKeyQuery[]): Promise<(CellRow | null)[]> {
    const plain = keys.filter((k) => !k.atRef);
    const refs = keys.filter((k) => k.atRef);
    const col = (ks: readonly CellKeyQuery[], f: keyof CellKeyQuery) => ks.map((k) => k[f] as string);
    const cols = (ks: readonly CellKeyQuery[]) => [
      col(ks, 'site'),
      col(ks, 'environment'),
      col(ks, 'component'),
    ];
    const [a, b] = await Promise.all([
      plain.length > 0 ? this.db.query<{ row: CellRow | null }>(R.cellsByKey, cols(plain)) : [],
      refs.length > 0
        ? this.db.query<{ row: CellRow | null }>(R.refCellsByKey, [...cols(refs), col(refs, 'atRef')])
        : [],
    ]);
    const found = new Map<CellKeyQuery, CellRow | null>();
    for (const [i, k] of plain.entries()) found.set(k, a[i]?.row ?? null);
    for (const [i, k] of refs.entries()) found.set(k, b[i]?.row ?? null);
    return keys.map((k) => found.get(k) ?? null);
  }
  async refTotals(limit: number): Promise<RefTotal[]> {
    return this.model.refTotals(limit);
  }
  listCellsOfRef(q: CellsOfRefQuery) {
    return this.model.cellsOfRef(q);
  }
  refGateCounts(q: RefGateQuery) {
    return this.model.refGateCounts(q);
  }
  refGateCells(q: RefGateCellsQuery) {
    return this.model.refGateCells(q);
  }
  refDefaultKeys(q: RefKeysQuery) {
    return refDefaultKeys(this.db, q);
  }
  async listAgentRefs() {
    const rows = await this.db.query<{ site: string; agent: string; refs: Record<string, string[]> }>(
      R.agentRefs,
    );
    return rows.map((r) => ({ site: r.site, agent: r.agent, refs: r.refs }));
  }
  listCells(site?: string) {
    return site ? this.all<CellRow>(R.cellsOf, [site]) : this.all<CellRow>(R.cells);
  }
  cellsAt(at: number) {
    return this.all<CellHistoryRow>(R.cellsAt, [at]);
  }
  getRefCell(site: string, environment: string, component: string, ref: string) {
    return this.one<CellRow>(R.getRefCell, [site, environment, component, ref]);
  }
  listRefCells(q: RefCellQuery) {
    return this.all<CellRow>(R.refCells, [q.ref ?? null, q.site ?? null, q.status ?? null, q.limit]);
  }
  getRun(runId: string) {
    return this.one<RunRow>(R.getRun, [runId]);
  }
  listRuns(q: RunQuery): Promise<RunRow[]> {
    const cell = [q.site, q.environment, q.component];
    const before = q.before ?? '\uffff';
    return q.ref === undefined
      ? this.all<RunRow>(R.runsDefault, [...cell, before, q.limit, q.status ?? null])
      : this.all<RunRow>(R.runsOfRef, [...cell, q.ref, before, q.limit, q.status ?? null]);
  }
  runsAt(ref: string, commit: string, limit: number) {
    return this.all<RunRow>(R.runsAt, [ref, commit, limit]);
  }
  getSite(site: string) {
    return this.one<SiteRow>(R.getSite, [site]);
  }
  listSites() {
    return this.all<SiteRow>(R.sites);
  }
  getBlob(sha256: string) {
    return this.one<BlobRow>(R.getBlob, [sha256]);
  }
  async heldBlobsFor(docId: string) {
    return (await this.db.query<{ sha256: string }>(R.heldBlobs, [docId])).map((r) => r.sha256);
  }
  async docsAnnouncing(sha256: string) {
    return (await this.db.query<{ doc_id: string }>(R.docsAnnouncing, [sha256])).map((r) => r.doc_id);
  }
  async downlinkHeads(sites: readonly string[]): Promise<Map<string, number>> {
    const rows = await this.db.query<{ site: string; seq: string | number | null }>(R.downlinkHeads, [
      [...sites],
    ]);
    return new Map(rows.filter((r) => r.seq !== null).map((r) => [r.site, Number(r.seq)]));
  }
  async readDownlink(site: string, after: number, limit: number): Promise<DownlinkRow[]> {
    const rows = await this.db.query<DownlinkDbRow>(R.downlink, [site, after, limit]);
    return rows.map((r) => ({
      seq: r.seq,
      site: r.site,
      agent: r.agent,
      kind: r.kind,
      docId: r.doc_id,
      requestId: r.request_id,
      replaceKey: r.replace_key,
      bytes: bytes(r.bytes),
      expiresAt: r.expires_at,
    }));
  }
  getPlanRequest(requestId: string) {
    return this.one<PlanRequestRow>(R.getRequest, [requestId]);
  }
  markDelivered(d: Deliveries): Promise<Deliveries> {
    if (d.requests.length + d.approvals.length === 0) return Promise.resolve({ requests: [], approvals: [] });
    return this.db.tx(async (c) => {
      const run = (s: Stmt, values: unknown[]) => c.query({ ...s, values }).then((r) => r.rowCount === 1);
      const [reqs, apps] = await Promise.all([
        Promise.all(d.requests.map((r) => run(R.deliverRequest, [r.requestId, json(r), r.state]))),
        Promise.all(d.approvals.map((a) => run(R.deliverApproval, [a.approvalId, json(a)]))),
      ]);
      return {
        requests: d.requests.filter((_, i) => reqs[i]),
        approvals: d.approvals.filter((_, i) => apps[i]),
      };
    });
  }
  markSwept(m: SweepMarks, webhooksOf: (written: SweepMarks) => WebhookRow[]): Promise<SweepMarks> {
    if (m.expired.length + m.staleCells.length + m.sites.length === 0)
      return Promise.resolve({ expired: [], staleCells: [], sites: [] });
    return this.db.tx(async (c) => {
      // The rows the marks name, locked until the commit: checked and written in one transaction.
      const read = async <T>(text: string, values: unknown[]) =>
        ((await c.query<Row<T>>({ text: `${text} FOR UPDATE`, values })).rows[0]?.row ?? null) as T | null;
      const requests = new Map<string, PlanRequestRow | null>();
      for (const r of m.expired)
        requests.set(r.requestId, await read<PlanRequestRow>(R.getRequest.text, [r.requestId]));
      const cells = new Map<string, CellRow | null>();
      const cellKey = (s: string, e: string, k: string) => JSON.stringify([s, e, k]);
      for (const x of m.staleCells)
        cells.set(
          cellKey(x.site, x.environment, x.component),
          await read<CellRow>(R.getCell.text, [x.site, x.environment, x.component]),
        );
      const sites = new Map<string, SiteRow | null>();
      for (const x of m.sites) sites.set(x.site, await read<SiteRow>(R.getSite.text, [x.site]));
      const written = marksStillTrue(m, {
        request: (id) => requests.get(id) ?? null,
        cell: (s, e, k) => cells.get(cellKey(s, e, k)) ?? null,
        site: (s) => sites.get(s) ?? null,
      });
      const steps = writeSteps({
        planRequests: written.expired,
        cells: written.staleCells,
        sites: written.sites,
        webhooks: webhooksOf(written),
      });
      for (const [s, values] of steps) await c.query({ ...s, values });
      return written;
    });
  }
  listPlanRequests(filter: { site?: string; open?: boolean; limit?: number } = {}) {
    return this.all<PlanRequestRow>(R.requests, [
      filter.site ?? null,
      filter.open === true,
      filter.limit ?? null,
    ]);
  }
  dueWebhooks(now: number, limit: number) {
    return this.all<WebhookRow>(R.dueWebhooks, [now, limit]);
  }
  getWebhook(id: string) {
    return this.one<WebhookRow>(R.getWebhook, [id]);
  }
  getUser(name: string) {
    return this.one<UserRow>(R.getUser, [name]);
  }
  userByToken(tokenSha256: string) {
    return this.one<UserRow>(R.userByToken, [tokenSha256]);
  }
  listUsers() {
    return this.all<UserRow>(R.users);
  }
  getSession(idSha256: string) {
    return this.one<SessionRow>(R.getSession, [idSha256]);
  }
  async listAudit(q: { limit: number; before?: number }): Promise<AuditRow[]> {
    const rows = await this.db.query<{ id: number; row: Omit<AuditRow, 'id'> }>(R.audit, [
      q.before ?? Number.MAX_SAFE_INTEGER,
      q.limit,
    ]);
    return rows.map((r) => ({ ...r.row, id: r.id }));
  }
  listApprovers() {
    return this.all<ApproverRow>(R.approvers);
  }
  getApproval(approvalId: string) {
    return this.one<ApprovalRow>(R.getApproval, [approvalId]);
  }
  listApprovals(q: { site: string; runId?: string; limit: number }) {
    return q.runId !== undefined
      ? this.all<ApprovalRow>(R.approvalsOfRun, [q.site, q.runId, q.limit])
      : this.all<ApprovalRow>(R.approvalsOfSite, [q.site, q.limit]);
  }
  listUnconfirmedApprovals(limit: number) {
    return this.all<ApprovalRow>(R.unconfirmedApprovals, [limit]);
  }
  async listApplies(site: string, runIds?: readonly string[]) {
    if (!runIds) return this.all<ApplyRow>(R.applies, [site]);
    if (runIds.length === 0) return [];
    const found = new Map((await this.all<ApplyRow>(R.appliesOf, [site, runIds])).map((a) => [a.runId, a]));
    // In the order asked, as the other stores answer.
    return runIds.flatMap((id) => {
      const a = found.get(id);
      return a ? [a] : [];
    });
  }

  /**
   * Retention in bounded steps (decision 466), as on SQLite: expired `@ref` cells in one transaction,
   * then runs and history one transaction per {@link PG_PRUNE_STEP_CELLS} cells (`pruneSteps.ts`), then
   * bundles, sessions and audit.
   */
  async prune(policy: RetentionPolicy, now: number): Promise<PruneResult> {
    const expired =
      policy.refMaxAgeMs === undefined
        ? { refCells: 0, refRuns: 0 }
        : await this.db
            .query<{ cells: number; runs: number }>(P.expireRefs, [now - policy.refMaxAgeMs])
            .then(([r]) => ({ refCells: r?.cells ?? 0, refRuns: r?.runs ?? 0 }));
    const { runs, history } = await pruneInSteps(this.db, policy, now);
    const bundles = await this.db.tx(async (c) => {
      const n = (await c.query({ ...P.bundles, values: [now - policy.maxAgeMs] })).rowCount;
      await c.query({ ...P.sessions, values: [now] });
      await c.query({ ...P.audit, values: [now - policy.failureMaxAgeMs] });
      return n ?? 0;
    });
    return { runs, history, bundles, ...expired };
  }

  close(): Promise<void> {
    return this.db.close();
  }
}
