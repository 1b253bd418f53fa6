import { pullMoves } from '../../core/downlinkCustody.js';
import { agentBrief } from '../../core/fleet/agentBrief.js';
import { sortPeers } from '../../core/peers.js';
import { isFailure, pruneRuns } from '../../core/retention.js';
import { marksStillTrue } from '../../core/sweepMarks.js';
import type {
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
  RefGateCell,
  RefGateCellsQuery,
  RefGateQuery,
  RefKeysQuery,
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
import { GATE_COMPLETE_STATUSES } from '../../ports/HubStore.js';
import { MemoryReadModel } from './MemoryReadModel.js';

const cellId = (s: string, e: string, c: string, ref = '') => `${s}\u0000${e}\u0000${c}\u0000${ref}`;
const clone = <T>(v: T): T => structuredClone(v);

/** The in-memory HubStore: for tests and as the reference the contract suite pins the SQLite one to. */
export class MemoryHubStore implements HubStore {
  private agents = new Map<string, AgentRow>();
  private peers = new Map<string, PeerRow>();
  private bundles = new Map<string, number>();
  private chunks = new Map<string, Uint8Array[]>();
  private cells = new Map<string, CellRow>();
  private readonly model = new MemoryReadModel();
  /** `@ref` cells, apart from the default ones. */
  private refCells = new Map<string, CellRow>();
  private history: CellHistoryRow[] = [];
  private runs = new Map<string, RunRow>();
  private sites = new Map<string, SiteRow>();
  private blobs = new Map<string, BlobRow>();
  private announcements: { sha256: string; docId: string; runId: string | null }[] = [];
  private downlink: DownlinkRow[] = [];
  private seq = 0;
  private requests = new Map<string, PlanRequestRow>();
  private webhooks = new Map<string, WebhookRow>();
  private users = new Map<string, UserRow>();
  private sessions = new Map<string, SessionRow>();
  private audit: AuditRow[] = [];
  private auditSeq = 0;
  private approvers = new Map<string, ApproverRow>();
  private approvals = new Map<string, ApprovalRow>();
  private applies = new Map<string, ApplyRow>();

  async commit(w: WriteSet): Promise<void> {
    this.applyNow(w);
  }

  /** The whole write set, with no await in between (one transaction for a one-threaded store). */
  private applyNow(w: WriteSet): void {
    for (const b of w.bundles ?? []) if (!this.bundles.has(b.id)) this.bundles.set(b.id, b.receivedAt);
    for (const c of w.docChunks ?? []) {
      const list = c.whole ? [] : (this.chunks.get(c.docId) ?? []);
      list.push(c.bytes.slice());
      this.chunks.set(c.docId, list);
    }
    for (const r of w.runs ?? []) if (!this.runs.has(r.runId)) this.runs.set(r.runId, clone(r));
    for (const c of w.cells ?? []) {
      if (c.atRef) this.refCells.set(cellId(c.site, c.environment, c.component, c.atRef), clone(c));
      else {
        this.cells.set(cellId(c.site, c.environment, c.component), clone(c));
        this.model.write(c);
      }
    }
    for (const h of w.history ?? []) this.history.push(clone(h));
    for (const a of w.agents ?? []) this.agents.set(`${a.site}/${a.agent}`, clone(a));
    for (const s of w.sites ?? []) this.sites.set(s.site, clone(s));
    for (const a of w.announcements ?? []) {
      if (!this.announcements.some((x) => x.sha256 === a.sha256 && x.docId === a.docId))
        this.announcements.push({ ...a });
    }
    for (const d of w.downlink ?? []) {
      if (d.kind === 'ack' && d.docId)
        this.downlink = this.downlink.filter((x) => !(x.kind === 'ack' && x.docId === d.docId));
      if (d.replaceKey) this.downlink = this.downlink.filter((x) => x.replaceKey !== d.replaceKey);
      this.downlink.push({ ...clone(d), replaceKey: d.replaceKey ?? null, seq: ++this.seq });
    }
    for (const p of w.planRequests ?? []) this.requests.set(p.requestId, clone(p));
    for (const h of w.webhooks ?? []) if (!this.webhooks.has(h.id)) this.webhooks.set(h.id, clone(h));
    for (const h of w.webhookUpdates ?? []) this.webhooks.set(h.id, clone(h));
    for (const b of w.blobs ?? []) this.blobs.set(b.sha256, clone(b));
    for (const p of w.peers ?? []) this.peers.set(p.tokenSha256, clone(p));
    for (const u of w.peerUses ?? []) {
      const p = this.peers.get(u.tokenSha256);
      if (p) p.lastUsedAt = u.at;
    }
    for (const x of w.peerStatuses ?? []) {
      const p = this.peers.get(x.tokenSha256);
      if (p) Object.assign(p, { status: clone(x.status), statusAt: x.at });
    }
    for (const u of w.users ?? []) this.users.set(u.name, clone(u));
    for (const x of w.sessions ?? []) this.sessions.set(x.idSha256, clone(x));
    for (const id of w.sessionDeletes ?? []) this.sessions.delete(id);
    for (const a of w.audit ?? []) this.audit.push({ ...clone(a), id: ++this.auditSeq });
    for (const a of w.approvers ?? []) this.approvers.set(a.name, clone(a));
    for (const n of w.approverDeletes ?? []) this.approvers.delete(n);
    for (const a of w.approvals ?? []) this.approvals.set(a.approvalId, clone(a));
    for (const a of w.applies ?? []) this.applies.set(`${a.site}\u0000${a.runId}`, clone(a));
  }

  async listApprovers() {
    return [...this.approvers.values()].sort((a, b) => (a.name < b.name ? -1 : 1)).map(clone);
  }
  async getApproval(approvalId: string) {
    return clone(this.approvals.get(approvalId) ?? null);
  }
  async listApprovals(q: { site: string; runId?: string; limit: number }) {
    return [...this.approvals.values()]
      .filter((a) => a.site === q.site && (q.runId === undefined || a.runId === q.runId))
      .sort((a, b) => (a.approvalId < b.approvalId ? -1 : 1))
      .slice(0, q.limit)
      .map(clone);
  }
  async listUnconfirmedApprovals(limit: number) {
    return [...this.approvals.values()]
      .filter((a) => a.deliveredAt === null && a.confirmBy != null)
      .sort((a, b) => (a.site < b.site ? -1 : a.site > b.site ? 1 : a.approvalId < b.approvalId ? -1 : 1))
      .slice(0, limit)
      .map(clone);
  }
  async listApplies(site: string, runIds?: readonly string[]) {
    return [...this.applies.values()]
      .filter((a) => a.site === site && (!runIds || runIds.includes(a.runId)))
      .sort((a, b) => (a.runId < b.runId ? -1 : 1))
      .map(clone);
  }

  async getUser(name: string) {
    return clone(this.users.get(name) ?? null);
  }
  async userByToken(tokenSha256: string) {
    return clone([...this.users.values()].find((u) => u.tokenSha256 === tokenSha256) ?? null);
  }
  async listUsers() {
    return [...this.users.values()].sort((a, b) => (a.name < b.name ? -1 : 1)).map(clone);
  }
  async getSession(idSha256: string) {
    return clone(this.sessions.get(idSha256) ?? null);
  }
  async listAudit(q: { limit: number; before?: number }) {
    return this.audit
      .filter((a) => q.before === undefined || a.id < q.before)
      .reverse()
      .slice(0, q.limit)
      .map(clone);
  }

  async getAgent(site: string, agent: string) {
    return clone(this.agents.get(`${site}/${agent}`) ?? null);
  }
  async listAgents(site?: string) {
    return [...this.agents.values()]
      .filter((a) => !site || a.site === site)
      .sort((a, b) => `${a.site}/${a.agent}`.localeCompare(`${b.site}/${b.agent}`))
      .map(clone);
  }
  async listAgentBriefs() {
    return (await this.listAgents()).map(agentBrief);
  }
  async peerByToken(tokenSha256: string) {
    return clone(this.peers.get(tokenSha256) ?? null);
  }
  async listPeers() {
    return sortPeers([...this.peers.values()].map(clone));
  }
  async hasBundle(id: string) {
    return this.bundles.has(id);
  }
  async docChunks(docId: string) {
    return (this.chunks.get(docId) ?? []).map((b) => b.slice());
  }
  async getCell(site: string, environment: string, component: string) {
    return clone(this.cells.get(cellId(site, environment, component)) ?? null);
  }
  async listCells(site?: string) {
    return [...this.cells.values()]
      .filter((c) => !site || c.site === site)
      .sort(byCell)
      .map(clone);
  }
  async cellCounts(scope: CountScope, keys?: readonly string[]) {
    return this.model.counts(this.cells.values(), scope, keys);
  }
  async pageCells(q: CellPageQuery) {
    return this.model.page(this.cells.values(), q).map(clone);
  }
  refTotals = async (n: number) =>
    this.model.refTotals([...this.cells.values(), ...this.refCells.values()], n);
  async listCellsOfRef(q: CellsOfRefQuery) {
    return this.model.cellsOfRef(this.cells.values(), q).map(clone);
  }
  /** The gate's default cells of a ref and their plans of the commit, by key (decision 615). */
  private gatePlans(q: RefGateQuery): (RefGateCell & { status: string | null })[] {
    const key = (c: { site: string; environment: string; component: string }) =>
      cellId(c.site, c.environment, c.component);
    const atRef = new Set([...this.refCells.values()].filter((c) => c.atRef === q.ref).map(key));
    const runs = new Map<string, RunRow>();
    for (const r of this.runs.values()) {
      if (r.ref !== q.ref || r.commit !== q.commit) continue;
      const had = runs.get(key(r));
      if (!had || had.runId < r.runId) runs.set(key(r), r);
    }
    return [...this.cells.values()]
      .filter((c) => c.ref === q.ref && !atRef.has(key(c)))
      .sort(byCell)
      .map((c) => {
        const at = (c.commit ?? null) === q.commit;
        const run = at ? null : (runs.get(key(c)) ?? null);
        return { cell: c, run, status: at ? c.status : (run?.status ?? null) };
      });
  }
  async refGateCounts(q: RefGateQuery) {
    const by = new Map<string | null, number>();
    for (const p of this.gatePlans(q)) by.set(p.status, (by.get(p.status) ?? 0) + 1);
    return [...by].map(([status, n]) => ({ status, n }));
  }
  async refGateCells(q: RefGateCellsQuery) {
    const done = new Set<string>(GATE_COMPLETE_STATUSES);
    const a = q.after;
    return this.gatePlans(q)
      .filter((p) => q.all || p.status === null || !done.has(p.status))
      .filter((p) => !a || byCell(p.cell, a) > 0)
      .slice(0, q.limit)
      .map((p) => ({ cell: clone(p.cell), run: clone(p.run) }));
  }
  async refDefaultKeys(q: RefKeysQuery) {
    const key = (c: { site: string; environment: string; component: string }) => ({
      site: c.site,
      environment: c.environment,
      component: c.component,
    });
    if (!q.keys) return [...this.cells.values()].filter((c) => c.ref === q.ref).map(key);
    return q.keys
      .filter((k) => this.cells.get(cellId(k.site, k.environment, k.component))?.ref === q.ref)
      .map(key);
  }
  async listAgentRefs() {
    return (await this.listAgents())
      .filter((a) => a.revokedAt === null && a.refs)
      .map((a) => ({ site: a.site, agent: a.agent, refs: a.refs }));
  }
  async attentionCells(q: AttentionQuery) {
    return this.model.attention(this.cells.values(), q).map(clone);
  }
  async pageSites(q: SitePageQuery) {
    const names = [...this.sites.keys(), ...[...this.agents.values()].map((a) => a.site)];
    return this.model.sites(names, this.cells.values(), (s) => this.sites.get(s)?.lastContactAt ?? null, q);
  }
  async advanceStale(now: number, limit: number) {
    return this.model.advanceStale(this.cells.values(), now, limit).map(clone);
  }
  async cellsAt(at: number) {
    const latest = new Map<string, CellHistoryRow>();
    for (const h of this.history) {
      if (h.receivedAt > at) continue;
      const k = cellId(h.site, h.environment, h.component);
      const prev = latest.get(k);
      if (!prev || h.receivedAt >= prev.receivedAt) latest.set(k, h);
    }
    return [...latest.values()].sort(byCell).map(clone);
  }
  async getRefCell(site: string, environment: string, component: string, ref: string) {
    return clone(this.refCells.get(cellId(site, environment, component, ref)) ?? null);
  }
  async getCells(keys: readonly CellKeyQuery[]) {
    return keys.map((k) =>
      clone(
        (k.atRef
          ? this.refCells.get(cellId(k.site, k.environment, k.component, k.atRef))
          : this.cells.get(cellId(k.site, k.environment, k.component))) ?? null,
      ),
    );
  }
  async listRefCells(q: RefCellQuery) {
    return [...this.refCells.values()]
      .filter(
        (c) =>
          (!q.ref || c.atRef === q.ref) &&
          (!q.site || c.site === q.site) &&
          (!q.status || c.status === q.status),
      )
      .sort((a, b) => byCell(a, b) || ((a.atRef ?? '') < (b.atRef ?? '') ? -1 : 1))
      .slice(0, q.limit)
      .map(clone);
  }
  async runsAt(ref: string, commit: string, limit: number) {
    return [...this.runs.values()]
      .filter((r) => r.ref === ref && r.commit === commit)
      .sort((a, b) => (a.runId < b.runId ? 1 : -1))
      .slice(0, limit)
      .map(clone);
  }
  async getRun(runId: string) {
    return clone(this.runs.get(runId) ?? null);
  }
  async listRuns(q: RunQuery) {
    return [...this.runs.values()]
      .filter(
        (r) =>
          r.site === q.site &&
          r.environment === q.environment &&
          r.component === q.component &&
          (q.ref === undefined ? !r.atRef : r.ref === q.ref) &&
          (q.status === undefined || r.status === q.status) &&
          (!q.before || r.runId < q.before),
      )
      .sort((a, b) => (a.runId < b.runId ? 1 : -1))
      .slice(0, q.limit)
      .map(clone);
  }
  async getSite(site: string) {
    return clone(this.sites.get(site) ?? null);
  }
  async listSites() {
    return [...this.sites.values()].sort((a, b) => a.site.localeCompare(b.site)).map(clone);
  }
  async getBlob(sha256: string) {
    return clone(this.blobs.get(sha256) ?? null);
  }
  async heldBlobsFor(docId: string) {
    return [...new Set(this.announcements.filter((a) => a.docId === docId).map((a) => a.sha256))]
      .filter((s) => this.blobs.has(s))
      .sort();
  }
  async docsAnnouncing(sha256: string) {
    return [...new Set(this.announcements.filter((a) => a.sha256 === sha256).map((a) => a.docId))].sort();
  }
  async readDownlink(site: string, after: number, limit: number) {
    return this.downlink
      .filter((d) => d.site === site && d.seq > after)
      .slice(0, limit)
      .map(clone);
  }
  async downlinkHeads(sites: readonly string[]) {
    const wanted = new Set(sites);
    const heads = new Map<string, number>();
    for (const d of this.downlink)
      if (wanted.has(d.site)) heads.set(d.site, Math.max(heads.get(d.site) ?? 0, d.seq));
    return heads;
  }
  async getPlanRequest(requestId: string) {
    return clone(this.requests.get(requestId) ?? null);
  }
  async markDelivered(d: Deliveries): Promise<Deliveries> {
    // No await before the writes: nothing runs between the check and the write.
    const requests = d.requests.filter((r) => pullMoves(this.requests.get(r.requestId), r));
    const approvals = d.approvals.filter((a) => this.approvals.get(a.approvalId)?.deliveredAt === null);
    for (const r of requests) this.requests.set(r.requestId, clone(r));
    for (const a of approvals) this.approvals.set(a.approvalId, clone(a));
    return clone({ requests, approvals });
  }
  async markSwept(m: SweepMarks, webhooksOf: (written: SweepMarks) => WebhookRow[]): Promise<SweepMarks> {
    // No await before the writes: nothing runs between the check and the write.
    const written = marksStillTrue(m, {
      request: (id) => this.requests.get(id) ?? null,
      cell: (site, env, comp) => this.cells.get(cellId(site, env, comp)) ?? null,
      site: (site) => this.sites.get(site) ?? null,
    });
    this.applyNow({
      planRequests: written.expired,
      cells: written.staleCells,
      sites: written.sites,
      webhooks: webhooksOf(written),
    });
    return clone(written);
  }
  async listPlanRequests(filter: { site?: string; open?: boolean; limit?: number } = {}) {
    return [...this.requests.values()]
      .filter((r) => !filter.site || r.site === filter.site)
      .filter((r) => !filter.open || r.state === 'pending' || r.state === 'delivered')
      .sort((a, b) => (a.requestId < b.requestId ? 1 : -1))
      .slice(0, filter.limit)
      .map(clone);
  }
  async dueWebhooks(now: number, limit: number) {
    return [...this.webhooks.values()]
      .filter((h) => h.state === 'pending' && h.nextAt <= now)
      .sort((a, b) => a.nextAt - b.nextAt || a.id.localeCompare(b.id))
      .slice(0, limit)
      .map(clone);
  }
  async getWebhook(id: string) {
    return clone(this.webhooks.get(id) ?? null);
  }
  async prune(policy: RetentionPolicy, now: number): Promise<PruneResult> {
    let refCells = 0;
    let refRuns = 0;
    if (policy.refMaxAgeMs !== undefined) {
      for (const [k, c] of this.refCells) {
        if (c.receivedAt >= now - policy.refMaxAgeMs) continue;
        this.refCells.delete(k);
        refCells++;
        for (const [id, r] of this.runs) {
          if (r.site !== c.site || r.environment !== c.environment || r.component !== c.component) continue;
          if (r.atRef !== c.atRef) continue;
          this.runs.delete(id);
          refRuns++;
        }
      }
    }
    const keep = new Set([...this.cells.values(), ...this.refCells.values()].map((c) => c.runId));
    const doomed = pruneRuns([...this.runs.values()], keep, policy, now);
    for (const id of doomed) this.runs.delete(id);
    // History: drop rows past maxAge, but keep the newest row per cell so `cellsAt` stays answerable.
    const newest = new Map<string, CellHistoryRow>();
    for (const h of this.history) {
      const k = cellId(h.site, h.environment, h.component);
      const p = newest.get(k);
      if (!p || h.receivedAt >= p.receivedAt) newest.set(k, h);
    }
    const keepRows = new Set(newest.values());
    const before = this.history.length;
    this.history = this.history.filter((h) => {
      if (keepRows.has(h)) return true;
      const limit = isFailure(h.status) ? policy.failureMaxAgeMs : policy.maxAgeMs;
      return now - h.receivedAt <= limit;
    });
    let bundles = 0;
    for (const [id, at] of this.bundles) {
      if (now - at > policy.maxAgeMs) {
        this.bundles.delete(id);
        bundles++;
      }
    }
    for (const [id, x] of this.sessions) if (x.expiresAt <= now) this.sessions.delete(id);
    this.audit = this.audit.filter((a) => a.at >= now - policy.failureMaxAgeMs);
    return { runs: doomed.length, history: before - this.history.length, bundles, refCells, refRuns };
  }
  /** One process: nothing to take. */
  lockDocs<T>(_docIds: readonly string[], fn: () => Promise<T>): Promise<T> {
    return fn();
  }

  async close() {}
}

function byCell(a: { site: string; environment: string; component: string }, b: typeof a): number {
  return (
    a.site.localeCompare(b.site) ||
    a.environment.localeCompare(b.environment) ||
    a.component.localeCompare(b.component)
  );
}
