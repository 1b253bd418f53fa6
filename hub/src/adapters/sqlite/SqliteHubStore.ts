import { openWalDatabase } from '@driftline/hop/sqlite';
import type Database from 'better-sqlite3';
import { pullMoves } from '../../core/downlinkCustody.js';
import { agentBrief } from '../../core/fleet/agentBrief.js';
import { sortPeers } from '../../core/peers.js';
import { marksStillTrue } from '../../core/sweepMarks.js';
import type {
  AgentBrief,
  AgentRow,
  AttentionQuery,
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
  RetentionPolicy,
  RunQuery,
  RunRow,
  SitePageQuery,
  SiteRow,
  SweepMarks,
  WebhookRow,
  WriteSet,
} from '../../ports/HubStore.js';
import { approvalStatements } from './approvalStatements.js';
import { authStatements, migrate } from './authStatements.js';
import { pruneStatements } from './pruneSteps.js';
import { readModelStatements } from './readModelStatements.js';
import { refKeyStatements } from './refKeyStatements.js';
import { refStatements } from './refStatements.js';

type Row = { row: string };
const parse = <T>(r: Row | undefined): T | null => (r ? (JSON.parse(r.row) as T) : null);
const parseAll = <T>(rs: Row[]): T[] => rs.map((r) => JSON.parse(r.row) as T);
const bytes = (b: Buffer): Uint8Array => new Uint8Array(b.buffer, b.byteOffset, b.byteLength).slice();

/**
 * HubStore on one SQLite file in WAL mode. Rows are kept as JSON beside the indexed columns the
 * queries need; every `commit` is one transaction (D1).
 */
export class SqliteHubStore implements HubStore {
  private readonly db: Database.Database;
  private readonly s: ReturnType<typeof prepare>;

  constructor(path: string) {
    this.db = openWalDatabase(path, { synchronous: 'NORMAL' });
    this.db.pragma('foreign_keys = ON');
    migrate(this.db);
    this.s = prepare(this.db);
    this.auth = authStatements(this.db);
    this.refs = refStatements(this.db);
    this.approvals = approvalStatements(this.db);
    this.model = readModelStatements(this.db);
    this.refKeys = refKeyStatements(this.db);
    this.pruneSteps = pruneStatements(this.db);
    // Cells stored before the read model get their columns (and counts) once, in bounded steps.
    const fill = this.db.transaction((after: [string, string, string]) => this.model.backfillStep(after));
    for (let at: [string, string, string] | null = ['', '', '']; at; ) at = fill(at);
  }
  private readonly model: ReturnType<typeof readModelStatements>;
  private readonly refKeys: ReturnType<typeof refKeyStatements>;
  private readonly pruneSteps: ReturnType<typeof pruneStatements>;
  private readonly approvals: ReturnType<typeof approvalStatements>;
  private readonly auth: ReturnType<typeof authStatements>;
  private readonly refs: ReturnType<typeof refStatements>;

  private readonly tx = (w: WriteSet): void => {
    const s = this.s;
    for (const b of w.bundles ?? []) s.insBundle.run(b.id, b.receivedAt);
    for (const c of w.docChunks ?? []) {
      if (c.whole) s.delChunks.run(c.docId);
      s.insChunk.run(c.docId, c.site, c.agent, c.epoch, Buffer.from(c.bytes));
    }
    this.model.writeCells(this.refs.write(w));
    for (const h of w.history ?? [])
      s.insHistory.run(h.site, h.environment, h.component, h.status, h.receivedAt, JSON.stringify(h));
    for (const a of w.agents ?? [])
      s.upAgent.run(a.site, a.agent, JSON.stringify(a), JSON.stringify(agentBrief(a)));
    for (const x of w.sites ?? []) s.upSite.run(x.site, JSON.stringify(x));
    for (const a of w.announcements ?? []) s.insAnnouncement.run(a.sha256, a.docId, a.runId);
    for (const d of w.downlink ?? []) {
      if (d.kind === 'ack' && d.docId) s.delAck.run(d.docId);
      if (d.replaceKey) s.delReplaced.run(d.replaceKey);
      s.insDownlink.run(
        d.site,
        d.agent,
        d.kind,
        d.docId,
        d.requestId,
        d.replaceKey ?? null,
        Buffer.from(d.bytes),
        d.expiresAt,
      );
    }
    for (const p of w.planRequests ?? []) s.upRequest.run(p.requestId, p.site, p.state, JSON.stringify(p));
    for (const h of w.webhooks ?? []) s.insWebhook.run(h.id, h.state, h.nextAt, JSON.stringify(h));
    for (const h of w.webhookUpdates ?? []) s.upWebhook.run(h.id, h.state, h.nextAt, JSON.stringify(h));
    for (const b of w.blobs ?? []) s.upBlob.run(b.sha256, JSON.stringify(b));
    for (const p of w.peers ?? []) s.upPeer.run(p.tokenSha256, JSON.stringify(p));
    for (const u of w.peerUses ?? []) s.usePeer.run(u.at, u.tokenSha256);
    for (const x of w.peerStatuses ?? []) s.peerStatus.run(JSON.stringify(x.status), x.at, x.tokenSha256);
    this.auth.write(w);
    this.approvals.write(w);
  };
  private readonly commitTx = (w: WriteSet): void => {
    this.txn ??= this.db.transaction(this.tx);
    this.txn(w);
  };
  private txn: ((w: WriteSet) => void) | undefined;

  async commit(w: WriteSet): Promise<void> {
    this.commitTx(w);
  }
  async getAgent(site: string, agent: string) {
    return parse<AgentRow>(this.s.getAgent.get(site, agent) as Row | undefined);
  }
  async listAgents(site?: string) {
    return parseAll<AgentRow>((site ? this.s.agentsOf.all(site) : this.s.agents.all()) as Row[]);
  }
  async listAgentBriefs() {
    return (this.s.agentBriefs.all() as { brief: string | null; row: string | null }[]).map((r) =>
      r.brief !== null
        ? (JSON.parse(r.brief) as AgentBrief)
        : agentBrief(JSON.parse(r.row as string) as AgentRow),
    );
  }
  async peerByToken(tokenSha256: string) {
    return parse<PeerRow>(this.s.getPeer.get(tokenSha256) as Row | undefined);
  }
  async listPeers() {
    return sortPeers(parseAll<PeerRow>(this.s.peers.all() as Row[]));
  }
  async hasBundle(id: string) {
    return this.s.hasBundle.get(id) !== undefined;
  }
  async docChunks(docId: string) {
    return (this.s.chunks.all(docId) as { bytes: Buffer }[]).map((r) => bytes(r.bytes));
  }
  async getCell(site: string, environment: string, component: string) {
    return parse<CellRow>(this.s.getCell.get(site, environment, component) as Row | undefined);
  }
  async listCells(site?: string) {
    return parseAll<CellRow>((site ? this.s.cellsOf.all(site) : this.s.cells.all()) as Row[]);
  }
  async cellCounts(scope: CountScope, keys?: readonly string[]) {
    return this.model.counts(scope, keys);
  }
  async pageCells(q: CellPageQuery) {
    return this.model.page(q);
  }
  async attentionCells(q: AttentionQuery) {
    return this.model.attention(q);
  }
  refTotals = async (limit: number) => this.model.refTotals(limit);
  listCellsOfRef = async (q: CellsOfRefQuery) => this.model.cellsOfRef(q);
  refGateCounts = async (q: RefGateQuery) => this.model.refGateCounts(q);
  refGateCells = async (q: RefGateCellsQuery) => this.model.refGateCells(q);
  refDefaultKeys = async (q: RefKeysQuery) => this.refKeys.refDefaultKeys(q);
  async listAgentRefs() {
    const rows = this.s.agentRefs.all() as { site: string; agent: string; refs: string }[];
    return rows.map((r) => ({
      site: r.site,
      agent: r.agent,
      refs: JSON.parse(r.refs) as Record<string, string[]>,
    }));
  }
  async pageSites(q: SitePageQuery) {
    return this.model.sites(q);
  }
  async advanceStale(now: number, limit: number) {
    return this.db.transaction(() => this.model.advanceStale(now, limit))();
  }
  async cellsAt(at: number) {
    return parseAll<CellHistoryRow>(this.s.cellsAt.all(at) as Row[]);
  }
  async getRun(runId: string) {
    return parse<RunRow>(this.s.getRun.get(runId) as Row | undefined);
  }
  async listRuns(q: RunQuery): Promise<RunRow[]> {
    return this.refs.listRuns(q);
  }
  async getRefCell(site: string, environment: string, component: string, ref: string) {
    return this.refs.getCell(site, environment, component, ref);
  }
  async getCells(keys: readonly CellKeyQuery[]) {
    return keys.map((k) =>
      k.atRef
        ? this.refs.getCell(k.site, k.environment, k.component, k.atRef)
        : parse<CellRow>(this.s.getCell.get(k.site, k.environment, k.component) as Row | undefined),
    );
  }
  async listRefCells(q: RefCellQuery) {
    return this.refs.listCells(q);
  }
  async runsAt(ref: string, commit: string, limit: number) {
    return this.refs.runsAt(ref, commit, limit);
  }
  async getSite(site: string) {
    return parse<SiteRow>(this.s.getSite.get(site) as Row | undefined);
  }
  async listSites() {
    return parseAll<SiteRow>(this.s.sites.all() as Row[]);
  }
  async getBlob(sha256: string) {
    return parse<BlobRow>(this.s.getBlob.get(sha256) as Row | undefined);
  }
  async heldBlobsFor(docId: string) {
    return (this.s.heldBlobs.all(docId) as { sha256: string }[]).map((r) => r.sha256);
  }
  async docsAnnouncing(sha256: string) {
    return (this.s.docsAnnouncing.all(sha256) as { doc_id: string }[]).map((r) => r.doc_id);
  }
  async readDownlink(site: string, after: number, limit: number): Promise<DownlinkRow[]> {
    const rows = this.s.downlink.all(site, after, limit) as {
      seq: number;
      site: string;
      agent: string | null;
      kind: 'ack' | 'control';
      doc_id: string | null;
      request_id: string | null;
      replace_key: string | null;
      bytes: Buffer;
      expires_at: number;
    }[];
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
  async downlinkHeads(sites: readonly string[]): Promise<Map<string, number>> {
    const rows = this.s.downlinkHeads.all(JSON.stringify(sites)) as { site: string; seq: number | null }[];
    return new Map(rows.filter((r) => r.seq !== null).map((r) => [r.site, r.seq as number]));
  }
  async getPlanRequest(requestId: string) {
    return parse<PlanRequestRow>(this.s.getRequest.get(requestId) as Row | undefined);
  }
  async markDelivered(d: Deliveries): Promise<Deliveries> {
    // One transaction: the states read are the ones written over.
    return this.db.transaction(() => {
      const requests = d.requests.filter((r) =>
        pullMoves(parse<PlanRequestRow>(this.s.getRequest.get(r.requestId) as Row | undefined), r),
      );
      const approvals = d.approvals.filter(
        (a) => this.approvals.getApproval(a.approvalId)?.deliveredAt === null,
      );
      this.tx({ planRequests: requests, approvals });
      return { requests, approvals };
    })();
  }
  async markSwept(m: SweepMarks, webhooksOf: (written: SweepMarks) => WebhookRow[]): Promise<SweepMarks> {
    // One transaction: the rows checked are the ones written over.
    return this.db.transaction(() => {
      const written = marksStillTrue(m, {
        request: (id) => parse<PlanRequestRow>(this.s.getRequest.get(id) as Row | undefined),
        cell: (site, env, comp) => parse<CellRow>(this.s.getCell.get(site, env, comp) as Row | undefined),
        site: (site) => parse<SiteRow>(this.s.getSite.get(site) as Row | undefined),
      });
      this.tx({
        planRequests: written.expired,
        cells: written.staleCells,
        sites: written.sites,
        webhooks: webhooksOf(written),
      });
      return written;
    })();
  }
  async listPlanRequests(filter: { site?: string; open?: boolean; limit?: number } = {}) {
    return parseAll<PlanRequestRow>(
      this.s.requests.all({
        site: filter.site ?? null,
        open: filter.open ? 1 : 0,
        limit: filter.limit ?? -1,
      }) as Row[],
    );
  }
  async dueWebhooks(now: number, limit: number) {
    return parseAll<WebhookRow>(this.s.dueWebhooks.all(now, limit) as Row[]);
  }
  async getWebhook(id: string) {
    return parse<WebhookRow>(this.s.getWebhook.get(id) as Row | undefined);
  }
  async getUser(name: string) {
    return this.auth.getUser(name);
  }
  async userByToken(tokenSha256: string) {
    return this.auth.userByToken(tokenSha256);
  }
  async listUsers() {
    return this.auth.listUsers();
  }
  async getSession(idSha256: string) {
    return this.auth.getSession(idSha256);
  }
  async listAudit(q: { limit: number; before?: number }) {
    return this.auth.listAudit(q);
  }
  async listApprovers() {
    return this.approvals.listApprovers();
  }
  async getApproval(approvalId: string) {
    return this.approvals.getApproval(approvalId);
  }
  async listApprovals(q: { site: string; runId?: string; limit: number }) {
    return this.approvals.listApprovals(q);
  }
  async listUnconfirmedApprovals(limit: number) {
    return this.approvals.listUnconfirmedApprovals(limit);
  }
  async listApplies(site: string, runIds?: readonly string[]) {
    return this.approvals.listApplies(site, runIds);
  }
  async prune(policy: RetentionPolicy, now: number): Promise<PruneResult> {
    const expired = this.db.transaction(() => this.refs.expire(policy, now))();
    const { runs, history } = await this.pruneSteps.pruneRunsAndHistory(policy, now);
    const bundles = this.db.transaction(() => {
      const n = this.s.delBundles.run(now - policy.maxAgeMs).changes;
      this.auth.prune(now, now - policy.failureMaxAgeMs);
      return n;
    })();
    return { runs, history, bundles, ...expired };
  }
  /** One process owns the file: nothing to take. */
  lockDocs<T>(_docIds: readonly string[], fn: () => Promise<T>): Promise<T> {
    return fn();
  }
  async close() {
    this.db.close();
  }
}

function prepare(db: Database.Database) {
  const p = (sql: string) => db.prepare(sql);
  return {
    insBundle: p('INSERT OR IGNORE INTO bundles (id, received_at) VALUES (?, ?)'),
    hasBundle: p('SELECT 1 FROM bundles WHERE id = ?'),
    delBundles: p('DELETE FROM bundles WHERE received_at < ?'),
    insChunk: p('INSERT INTO doc_chunks (doc_id, site, agent, epoch, bytes) VALUES (?, ?, ?, ?, ?)'),
    chunks: p('SELECT bytes FROM doc_chunks WHERE doc_id = ? ORDER BY seq'),
    delChunks: p('DELETE FROM doc_chunks WHERE doc_id = ?'),
    getRun: p('SELECT row FROM runs WHERE run_id = ?'),
    getCell: p('SELECT row FROM cells WHERE site = ? AND environment = ? AND component = ?'),
    cells: p('SELECT row FROM cells ORDER BY site, environment, component'),
    cellsOf: p('SELECT row FROM cells WHERE site = ? ORDER BY site, environment, component'),
    insHistory: p(
      'INSERT INTO cell_history (site, environment, component, status, received_at, row) VALUES (?, ?, ?, ?, ?, ?)',
    ),
    cellsAt: p(
      `SELECT h.row FROM cell_history h JOIN (
         SELECT MAX(seq) AS seq FROM cell_history WHERE received_at <= ? GROUP BY site, environment, component
       ) m ON h.seq = m.seq ORDER BY h.site, h.environment, h.component`,
    ),
    upAgent: p(
      'INSERT INTO agents (site, agent, row, brief) VALUES (?, ?, ?, ?) ON CONFLICT (site, agent) DO UPDATE SET row = excluded.row, brief = excluded.brief',
    ),
    getAgent: p('SELECT row FROM agents WHERE site = ? AND agent = ?'),
    agents: p('SELECT row FROM agents ORDER BY site, agent'),
    // The ref gate's agents: their patterns only, parsed by SQLite, not each whole row by JS (decision 615).
    agentRefs: p(
      "SELECT site, agent, json_extract(row, '$.refs') AS refs FROM agents WHERE json_extract(row, '$.revokedAt') IS NULL AND json_type(row, '$.refs') = 'object' ORDER BY site, agent",
    ),
    agentBriefs: p(
      'SELECT brief, CASE WHEN brief IS NULL THEN row END AS row FROM agents ORDER BY site, agent',
    ),
    agentsOf: p('SELECT row FROM agents WHERE site = ? ORDER BY site, agent'),
    upPeer: p(
      'INSERT INTO peers (token_sha256, row) VALUES (?, ?) ON CONFLICT (token_sha256) DO UPDATE SET row = excluded.row',
    ),
    getPeer: p('SELECT row FROM peers WHERE token_sha256 = ?'),
    peers: p('SELECT row FROM peers'),
    usePeer: p("UPDATE peers SET row = json_set(row, '$.lastUsedAt', ?) WHERE token_sha256 = ?"),
    peerStatus: p(
      "UPDATE peers SET row = json_set(row, '$.status', json(?), '$.statusAt', ?) WHERE token_sha256 = ?",
    ),
    upSite: p(
      'INSERT INTO sites (site, row) VALUES (?, ?) ON CONFLICT (site) DO UPDATE SET row = excluded.row',
    ),
    getSite: p('SELECT row FROM sites WHERE site = ?'),
    sites: p('SELECT row FROM sites ORDER BY site'),
    insAnnouncement: p('INSERT OR IGNORE INTO announcements (sha256, doc_id, run_id) VALUES (?, ?, ?)'),
    heldBlobs: p(
      'SELECT DISTINCT a.sha256 FROM announcements a JOIN blobs b ON b.sha256 = a.sha256 WHERE a.doc_id = ? ORDER BY a.sha256',
    ),
    docsAnnouncing: p('SELECT DISTINCT doc_id FROM announcements WHERE sha256 = ? ORDER BY doc_id'),
    upBlob: p(
      'INSERT INTO blobs (sha256, row) VALUES (?, ?) ON CONFLICT (sha256) DO UPDATE SET row = excluded.row',
    ),
    getBlob: p('SELECT row FROM blobs WHERE sha256 = ?'),
    delAck: p("DELETE FROM downlink WHERE kind = 'ack' AND doc_id = ?"),
    delReplaced: p('DELETE FROM downlink WHERE replace_key = ?'),
    insDownlink: p(
      'INSERT INTO downlink (site, agent, kind, doc_id, request_id, replace_key, bytes, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    ),
    downlink: p('SELECT * FROM downlink WHERE site = ? AND seq > ? ORDER BY seq LIMIT ?'),
    // one look at the (site, seq) index per site (decision 620)
    downlinkHeads: p(
      'SELECT j.value AS site, (SELECT max(seq) FROM downlink WHERE site = j.value) AS seq FROM json_each(?) j',
    ),
    upRequest: p(
      'INSERT INTO plan_requests (request_id, site, state, row) VALUES (?, ?, ?, ?) ON CONFLICT (request_id) DO UPDATE SET state = excluded.state, row = excluded.row',
    ),
    getRequest: p('SELECT row FROM plan_requests WHERE request_id = ?'),
    requests: p(
      `SELECT row FROM plan_requests WHERE (@site IS NULL OR site = @site) AND (@open = 0 OR state IN ('pending','delivered')) ORDER BY request_id DESC LIMIT @limit`,
    ),
    insWebhook: p('INSERT OR IGNORE INTO webhooks (id, state, next_at, row) VALUES (?, ?, ?, ?)'),
    upWebhook: p(
      'INSERT INTO webhooks (id, state, next_at, row) VALUES (?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET state = excluded.state, next_at = excluded.next_at, row = excluded.row',
    ),
    getWebhook: p('SELECT row FROM webhooks WHERE id = ?'),
    dueWebhooks: p(
      "SELECT row FROM webhooks WHERE state = 'pending' AND next_at <= ? ORDER BY next_at, id LIMIT ?",
    ),
  };
}
