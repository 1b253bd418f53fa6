import type {
  AgentStorage,
  AgentWriteSet,
  BlobInfo,
  BlobRow,
  EpochRow,
  HeldCellRow,
  HeldRunRow,
  PlanRequestRow,
  PushRow,
  RejectionRow,
  RunRow,
  UpstreamRow,
} from '../../ports/AgentStorage.js';
import type { ApplyRecord } from '../../ports/ApplyStore.js';

const copy = <T>(row: T): T => structuredClone(row);
const info = ({ data, ...rest }: BlobRow): BlobInfo => ({ ...rest, held: data !== null });
const byKey = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * AgentStorage in memory: the ledger's tests run against it, and it is the reference the SQLite
 * adapter is held to by the contract suite. Nothing survives the process.
 */
export class MemoryAgentStorage implements AgentStorage {
  readonly location = 'memory';
  private readonly metaRows = new Map<string, string>();
  private readonly epochRows = new Map<number, EpochRow>();
  private readonly chunkRows = new Map<number, Uint8Array[]>();
  private readonly runRows = new Map<string, RunRow>();
  private readonly blobRows = new Map<string, BlobRow>();
  private readonly pushRows = new Map<string, PushRow>();
  private readonly upstreamRows = new Map<string, UpstreamRow>();
  private readonly counterRows = new Map<string, number>();
  private readonly rejectionRows = new Map<string, RejectionRow>();
  private readonly planRequestRows = new Map<string, PlanRequestRow>();
  private readonly applyRows = new Map<string, ApplyRecord>();
  private readonly heldRows = new Map<string, HeldCellRow>();
  private readonly heldRunRows = new Map<string, HeldRunRow>();
  private closed = false;

  commitFirst(w: AgentWriteSet): boolean {
    if (this.latestEpoch() !== null) return false;
    this.commit(w);
    return true;
  }

  commit(w: AgentWriteSet): void {
    this.open();
    // Check everything that can refuse first, so a refused write set leaves nothing behind.
    const newRuns = new Set<string>();
    for (const r of w.runs ?? []) {
      if (this.runRows.has(r.runId) || newRuns.has(r.runId))
        throw new Error(`run ${r.runId} is stored already (runs are inserted once)`);
      newRuns.add(r.runId);
    }
    for (const [k, v] of Object.entries(w.meta ?? {})) this.metaRows.set(k, v);
    for (const e of w.epochs ?? []) this.epochRows.set(e.epoch, copy(e));
    for (const e of w.chunkResets ?? []) this.chunkRows.delete(e);
    for (const c of w.chunks ?? []) {
      const list = this.chunkRows.get(c.epoch) ?? [];
      list.push(c.data);
      this.chunkRows.set(c.epoch, list);
    }
    for (const r of w.runs ?? []) this.runRows.set(r.runId, copy(r));
    for (const a of w.runAcks ?? []) {
      const r = this.runRows.get(a.runId);
      if (r) r.ackedAt = a.ackedAt;
    }
    for (const e of w.ackedRunsDeleted ?? [])
      for (const [id, r] of this.runRows) if (r.epoch === e && r.ackedAt !== null) this.runRows.delete(id);
    for (const b of w.blobs ?? []) if (!this.blobRows.has(b.sha256)) this.blobRows.set(b.sha256, { ...b });
    for (const u of w.blobUpdates ?? []) {
      const b = this.blobRows.get(u.sha256);
      if (b) for (const [k, v] of Object.entries(u)) if (v !== undefined) Object.assign(b, { [k]: v });
    }
    for (const p of w.pushes ?? []) this.pushRows.set(p.bundleId, copy(p));
    for (const u of w.upstreams ?? []) this.upstreamRows.set(u.url, copy(u));
    for (const [k, v] of Object.entries(w.counters ?? {})) this.counterRows.set(k, v);
    for (const c of w.rejectionDeletes ?? []) this.rejectionRows.delete(c);
    for (const r of w.rejections ?? []) this.rejectionRows.set(r.code, copy(r));
    for (const p of w.planRequests ?? [])
      if (!this.planRequestRows.has(p.requestId)) this.planRequestRows.set(p.requestId, copy(p));
    for (const a of w.applies ?? []) this.applyRows.set(a.record.apply.runId, copy(a.record));
    if (w.heldCleared) {
      this.heldRows.clear();
      this.heldRunRows.clear();
    }
    for (const h of w.heldCells ?? []) this.heldRows.set(h.cellKey, copy(h));
    for (const h of w.heldRuns ?? []) this.heldRunRows.set(h.runId, copy(h));
  }

  meta(key: string): string | undefined {
    return this.metaRows.get(key);
  }

  epochs(which: 'all' | 'unpruned'): EpochRow[] {
    return [...this.epochRows.values()]
      .filter((e) => which === 'all' || e.prunedAt === null)
      .sort((a, b) => a.epoch - b.epoch)
      .map(copy);
  }

  epoch(epoch: number): EpochRow | undefined {
    const e = this.epochRows.get(epoch);
    return e && copy(e);
  }

  latestEpoch(): number | null {
    return this.epochRows.size === 0 ? null : Math.max(...this.epochRows.keys());
  }

  chunks(epoch: number): Uint8Array[] {
    return [...(this.chunkRows.get(epoch) ?? [])];
  }

  chunkCount(epoch: number): number {
    return this.chunkRows.get(epoch)?.length ?? 0;
  }

  private runs(): RunRow[] {
    return [...this.runRows.values()];
  }

  unackedRuns(epoch: number): RunRow[] {
    return this.runs()
      .filter((r) => r.epoch === epoch && r.ackedAt === null)
      .map(copy);
  }

  unackedRunCount(): number {
    return this.runs().filter((r) => r.ackedAt === null).length;
  }

  oldestUnackedFinish(): number | null {
    const t = this.runs()
      .filter((r) => r.ackedAt === null)
      .map((r) => r.finishedAt);
    return t.length === 0 ? null : Math.min(...t);
  }

  hasUnackedRun(epoch: number, statuses: readonly string[]): boolean {
    return this.runs().some((r) => r.epoch === epoch && r.ackedAt === null && statuses.includes(r.status));
  }

  cellRuns(environment: string, component: string, cellRef: string | null, limit: number): RunRow[] {
    return this.runs()
      .filter((r) => r.environment === environment && r.component === component && r.cellRef === cellRef)
      .sort((a, b) => byKey(b.runId, a.runId))
      .slice(0, limit)
      .map(copy);
  }

  latestChangedRunAfter(
    environment: string,
    component: string,
    cellRef: string | null,
    runId: string,
  ): string | undefined {
    return this.cellRuns(environment, component, cellRef, Number.MAX_SAFE_INTEGER).find(
      (r) => r.runId > runId && !r.unchanged,
    )?.runId;
  }

  heldCells(): HeldCellRow[] {
    return [...this.heldRows.values()].sort((a, b) => byKey(a.cellKey, b.cellKey)).map(copy);
  }
  heldRuns(): HeldRunRow[] {
    return [...this.heldRunRows.values()].sort((a, b) => byKey(a.runId, b.runId)).map(copy);
  }

  blob(sha256: string): BlobInfo | undefined {
    const b = this.blobRows.get(sha256);
    return b && info(b);
  }

  private blobsWhere(keep: (b: BlobRow) => boolean): BlobRow[] {
    return [...this.blobRows.values()]
      .filter(keep)
      .sort((a, b) => a.createdAt - b.createdAt || byKey(a.sha256, b.sha256));
  }

  unannouncedBlobs(epoch: number, announcedBefore = Number.NEGATIVE_INFINITY): BlobInfo[] {
    return this.blobsWhere(
      (b) =>
        b.runId !== null &&
        this.runRows.get(b.runId)?.epoch === epoch &&
        (b.announcedAt === null || (b.announcedAt <= announcedBefore && b.uploadedAt !== null)) &&
        b.ackedAt === null &&
        b.droppedAt === null,
    ).map(info);
  }

  announcedBlobs(): BlobInfo[] {
    return this.blobsWhere((b) => b.announcedAt !== null && b.ackedAt === null && b.droppedAt === null).map(
      info,
    );
  }

  blobsToUpload(limit: number, uploadedBefore = Number.NEGATIVE_INFINITY): BlobRow[] {
    return this.blobsWhere(
      (b) =>
        b.data !== null && b.ackedAt === null && (b.uploadedAt === null || b.uploadedAt <= uploadedBefore),
    )
      .slice(0, limit)
      .map((b) => ({ ...b }));
  }

  awaitingReceipt(limit: number): BlobInfo[] {
    return this.blobsWhere((b) => b.data !== null && b.uploadedAt !== null && b.ackedAt === null)
      .sort((a, b) => (a.uploadedAt ?? 0) - (b.uploadedAt ?? 0) || byKey(a.sha256, b.sha256))
      .slice(0, limit)
      .map(info);
  }

  blobsAwaitingReceipt(): number {
    return this.blobsWhere((b) => b.data !== null && b.uploadedAt !== null && b.ackedAt === null).length;
  }

  heldBlobs(statuses: readonly string[]): BlobInfo[] {
    return this.blobsWhere((b) => b.data !== null && statuses.includes(b.status)).map(info);
  }

  blobTotals(unackedOnly: boolean): { count: number; bytes: number } {
    const held = this.blobsWhere((b) => b.data !== null && (!unackedOnly || b.ackedAt === null));
    return { count: held.length, bytes: held.reduce((n, b) => n + b.size, 0) };
  }

  lastPush(): PushRow | undefined {
    const latest = [...this.pushRows.values()].reduce<PushRow | undefined>(
      (a, p) => (!a || p.createdAt >= a.createdAt ? p : a),
      undefined,
    );
    return latest && copy(latest);
  }

  upstream(url: string): UpstreamRow | undefined {
    const u = this.upstreamRows.get(url);
    return u && copy(u);
  }

  upstreams(): UpstreamRow[] {
    return [...this.upstreamRows.values()].sort((a, b) => byKey(a.url, b.url)).map(copy);
  }

  counter(name: string): number {
    return this.counterRows.get(name) ?? 0;
  }

  rejections(): RejectionRow[] {
    return [...this.rejectionRows.values()]
      .sort((a, b) => b.receivedAt - a.receivedAt || byKey(a.code, b.code))
      .map(copy);
  }

  planRequest(requestId: string): PlanRequestRow | undefined {
    const p = this.planRequestRows.get(requestId);
    return p && copy(p);
  }

  apply(runId: string): ApplyRecord | undefined {
    const a = this.applyRows.get(runId);
    return a && copy(a);
  }

  appliesIn(state: string): ApplyRecord[] {
    return [...this.applyRows.values()]
      .filter((a) => a.apply.state === state)
      .sort((a, b) => byKey(a.apply.runId, b.apply.runId))
      .slice(0, 1000)
      .map(copy);
  }

  close(): void {
    this.closed = true;
  }

  private open(): void {
    if (this.closed) throw new Error('the memory storage is closed');
  }
}
