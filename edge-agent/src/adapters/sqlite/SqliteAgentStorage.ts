import type Database from 'better-sqlite3';
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
import { applyWrites } from './agentWrites.js';

type Row = Record<string, unknown>;
const num = (v: unknown) => v as number;
const numOrNull = (v: unknown) => (v === null || v === undefined ? null : (v as number));
const strOrNull = (v: unknown) => (v === null || v === undefined ? null : (v as string));
const bytes = (b: Buffer) => new Uint8Array(b.buffer, b.byteOffset, b.byteLength);

const epochRow = (r: Row): EpochRow => ({
  epoch: num(r.epoch),
  createdAt: num(r.created_at),
  sealedAt: numOrNull(r.sealed_at),
  ackedHeads: JSON.parse(r.acked_heads as string) as string[],
  ackedAt: numOrNull(r.acked_at),
  receiptedHeads: JSON.parse(r.receipted_heads as string) as string[],
  receiptedAt: numOrNull(r.receipted_at),
  rejectedAt: numOrNull(r.rejected_at),
  prunedAt: numOrNull(r.pruned_at),
  bytes: num(r.bytes),
  changes: num(r.changes),
});

const runRow = (r: Row): RunRow => ({
  runId: r.run_id as string,
  epoch: num(r.epoch),
  environment: r.environment as string,
  component: r.component as string,
  cellRef: strOrNull(r.cell_ref),
  status: r.status as string,
  planHash: strOrNull(r.plan_hash),
  finishedAt: num(r.finished_at),
  recordedAt: num(r.recorded_at),
  unchanged: r.unchanged === 1,
  detailBlob: strOrNull(r.detail_blob),
  ackedAt: numOrNull(r.acked_at),
});

const blobInfo = (r: Row): BlobInfo => ({
  sha256: r.sha256 as string,
  size: num(r.size),
  contentType: r.content_type as string,
  runId: strOrNull(r.run_id),
  status: r.status as string,
  createdAt: num(r.created_at),
  announcedAt: numOrNull(r.announced_at),
  uploadedAt: numOrNull(r.uploaded_at),
  uploadUpstream: strOrNull(r.upload_upstream),
  ackedAt: numOrNull(r.acked_at),
  droppedAt: numOrNull(r.dropped_at),
  held: r.held === 1,
});

const upstreamRow = (r: Row): UpstreamRow => ({
  url: r.url as string,
  cursor: strOrNull(r.cursor),
  lastOkAt: numOrNull(r.last_ok_at),
  lastErrorAt: numOrNull(r.last_error_at),
  lastError: strOrNull(r.last_error),
  consecutiveFailures: num(r.consecutive_failures),
});

/** Blob columns without the bytes, and whether they are held. */
const BLOB_INFO =
  'b.sha256, b.size, b.content_type, b.run_id, b.status, b.created_at, b.announced_at, b.uploaded_at, ' +
  'b.upload_upstream, b.acked_at, b.dropped_at, (b.data IS NOT NULL) AS held';
const marks = (n: number) => Array.from({ length: n }, () => '?').join(', ');

/**
 * AgentStorage in the agent's SQLite file (WAL, synchronous=FULL: a commit that returned survives power
 * loss). Takes the connection `openAgentDatabase` opened, shared with the other adapters over the file,
 * and closes it on `close()`.
 */
export class SqliteAgentStorage implements AgentStorage {
  private readonly statements = new Map<string, Database.Statement>();

  constructor(
    private readonly db: Database.Database,
    readonly location: string = db.name,
  ) {}

  /** A prepared statement, compiled once per connection: a record runs a dozen of them. */
  private sql = (text: string): Database.Statement => {
    let s = this.statements.get(text);
    if (!s) {
      s = this.db.prepare(text);
      this.statements.set(text, s);
    }
    return s;
  };

  commit(writes: AgentWriteSet): void {
    this.db.transaction(() => applyWrites(this.sql, writes)).immediate();
  }

  commitFirst(writes: AgentWriteSet): boolean {
    return this.db
      .transaction(() => {
        if (this.latestEpoch() !== null) return false;
        applyWrites(this.sql, writes);
        return true;
      })
      .immediate();
  }

  meta(key: string): string | undefined {
    return (this.sql('SELECT value FROM meta WHERE key = ?').get(key) as { value: string } | undefined)
      ?.value;
  }

  epochs(which: 'all' | 'unpruned'): EpochRow[] {
    const where = which === 'unpruned' ? 'WHERE pruned_at IS NULL' : '';
    return (this.sql(`SELECT * FROM epochs ${where} ORDER BY epoch`).all() as Row[]).map(epochRow);
  }

  epoch(epoch: number): EpochRow | undefined {
    const r = this.sql('SELECT * FROM epochs WHERE epoch = ?').get(epoch) as Row | undefined;
    return r && epochRow(r);
  }

  latestEpoch(): number | null {
    return (this.sql('SELECT max(epoch) AS e FROM epochs').get() as { e: number | null }).e;
  }

  chunks(epoch: number): Uint8Array[] {
    return (
      this.sql('SELECT data FROM chunks WHERE epoch = ? ORDER BY id').all(epoch) as { data: Buffer }[]
    ).map((r) => bytes(r.data));
  }

  chunkCount(epoch: number): number {
    return (this.sql('SELECT count(*) AS n FROM chunks WHERE epoch = ?').get(epoch) as { n: number }).n;
  }

  unackedRuns(epoch: number): RunRow[] {
    return (this.sql('SELECT * FROM runs WHERE epoch = ? AND acked_at IS NULL').all(epoch) as Row[]).map(
      runRow,
    );
  }

  unackedRunCount(): number {
    return (this.sql('SELECT count(*) AS n FROM runs WHERE acked_at IS NULL').get() as { n: number }).n;
  }

  oldestUnackedFinish(): number | null {
    // min() over the (acked_at, finished_at) index is a seek, not a scan.
    return (
      this.sql('SELECT min(finished_at) AS oldest FROM runs WHERE acked_at IS NULL').get() as {
        oldest: number | null;
      }
    ).oldest;
  }

  hasUnackedRun(epoch: number, statuses: readonly string[]): boolean {
    if (statuses.length === 0) return false;
    return (
      this.sql(
        `SELECT 1 FROM runs WHERE epoch = ? AND acked_at IS NULL AND status IN (${marks(statuses.length)}) LIMIT 1`,
      ).get(epoch, ...statuses) !== undefined
    );
  }

  cellRuns(environment: string, component: string, cellRef: string | null, limit: number): RunRow[] {
    return (
      this.sql(
        "SELECT * FROM runs WHERE environment = ? AND component = ? AND coalesce(cell_ref, '') = ? ORDER BY run_id DESC LIMIT ?",
      ).all(environment, component, cellRef ?? '', limit) as Row[]
    ).map(runRow);
  }

  latestChangedRunAfter(
    environment: string,
    component: string,
    cellRef: string | null,
    runId: string,
  ): string | undefined {
    const row = this.sql(
      `SELECT run_id FROM runs WHERE environment = ? AND component = ? AND coalesce(cell_ref, '') = ?
       AND run_id > ? AND unchanged = 0 ORDER BY run_id DESC LIMIT 1`,
    ).get(environment, component, cellRef ?? '', runId) as { run_id: string } | undefined;
    return row?.run_id;
  }

  heldCells(): HeldCellRow[] {
    return (
      this.sql('SELECT cell_key, epoch, cell, held_at FROM held_cells ORDER BY cell_key').all() as Array<{
        cell_key: string;
        epoch: number;
        cell: string;
        held_at: number;
      }>
    ).map((r) => ({ cellKey: r.cell_key, epoch: r.epoch, cell: r.cell, heldAt: r.held_at }));
  }
  heldRuns(): HeldRunRow[] {
    return (
      this.sql(
        'SELECT run_id, epoch, run, held_at, wait_until FROM held_runs ORDER BY run_id',
      ).all() as Array<{
        run_id: string;
        epoch: number;
        run: string;
        held_at: number;
        wait_until: number | null;
      }>
    ).map((r) => ({
      runId: r.run_id,
      epoch: r.epoch,
      run: r.run,
      heldAt: r.held_at,
      waitUntil: r.wait_until,
    }));
  }

  blob(sha256: string): BlobInfo | undefined {
    const r = this.sql(`SELECT ${BLOB_INFO} FROM blobs b WHERE b.sha256 = ?`).get(sha256) as Row | undefined;
    return r && blobInfo(r);
  }

  unannouncedBlobs(epoch: number, announcedBefore = Number.NEGATIVE_INFINITY): BlobInfo[] {
    const before = Number.isFinite(announcedBefore) ? announcedBefore : Number.MIN_SAFE_INTEGER;
    return (
      this.sql(
        `SELECT ${BLOB_INFO} FROM blobs b JOIN runs r ON r.run_id = b.run_id
         WHERE r.epoch = ? AND (b.announced_at IS NULL OR (b.announced_at <= ? AND b.uploaded_at IS NOT NULL))
         AND b.acked_at IS NULL AND b.dropped_at IS NULL
         ORDER BY b.created_at, b.sha256`,
      ).all(epoch, before) as Row[]
    ).map(blobInfo);
  }

  announcedBlobs(): BlobInfo[] {
    return (
      this.sql(
        `SELECT ${BLOB_INFO} FROM blobs b
         WHERE b.announced_at IS NOT NULL AND b.acked_at IS NULL AND b.dropped_at IS NULL ORDER BY b.created_at, b.sha256`,
      ).all() as Row[]
    ).map(blobInfo);
  }

  blobsToUpload(limit: number, uploadedBefore = Number.NEGATIVE_INFINITY): BlobRow[] {
    const rows = this.sql(
      `SELECT ${BLOB_INFO}, b.data FROM blobs b
       WHERE b.data IS NOT NULL AND b.acked_at IS NULL AND (b.uploaded_at IS NULL OR b.uploaded_at <= ?)
       ORDER BY b.created_at LIMIT ?`,
    ).all(Number.isFinite(uploadedBefore) ? uploadedBefore : -1, limit) as Row[];
    return rows.map((r) => {
      const { held: _held, ...row } = blobInfo(r);
      return { ...row, data: bytes(r.data as Buffer) };
    });
  }

  blobsAwaitingReceipt(): number {
    const r = this.sql(
      'SELECT COUNT(*) AS n FROM blobs WHERE data IS NOT NULL AND uploaded_at IS NOT NULL AND acked_at IS NULL',
    ).get() as { n: number };
    return r.n;
  }

  awaitingReceipt(limit: number): BlobInfo[] {
    return (
      this.sql(
        `SELECT ${BLOB_INFO} FROM blobs b WHERE b.data IS NOT NULL AND b.uploaded_at IS NOT NULL
         AND b.acked_at IS NULL ORDER BY b.uploaded_at, b.sha256 LIMIT ?`,
      ).all(limit) as Row[]
    ).map(blobInfo);
  }

  heldBlobs(statuses: readonly string[]): BlobInfo[] {
    if (statuses.length === 0) return [];
    return (
      this.sql(
        `SELECT ${BLOB_INFO} FROM blobs b WHERE b.data IS NOT NULL AND b.status IN (${marks(statuses.length)})
         ORDER BY b.created_at`,
      ).all(...statuses) as Row[]
    ).map(blobInfo);
  }

  blobTotals(unackedOnly: boolean): { count: number; bytes: number } {
    return this.sql(
      `SELECT count(*) AS count, coalesce(sum(size), 0) AS bytes FROM blobs WHERE data IS NOT NULL${unackedOnly ? ' AND acked_at IS NULL' : ''}`,
    ).get() as { count: number; bytes: number };
  }

  lastPush(): PushRow | undefined {
    const r = this.sql('SELECT * FROM pushes ORDER BY created_at DESC LIMIT 1').get() as Row | undefined;
    return (
      r && {
        bundleId: r.bundle_id as string,
        epoch: num(r.epoch),
        heads: JSON.parse(r.heads as string) as string[],
        bytes: num(r.bytes),
        createdAt: num(r.created_at),
        upstream: strOrNull(r.upstream),
        receipt: strOrNull(r.receipt),
        receiptAt: numOrNull(r.receipt_at),
      }
    );
  }

  upstream(url: string): UpstreamRow | undefined {
    const r = this.sql('SELECT * FROM upstreams WHERE url = ?').get(url) as Row | undefined;
    return r && upstreamRow(r);
  }

  upstreams(): UpstreamRow[] {
    return (this.sql('SELECT * FROM upstreams ORDER BY url').all() as Row[]).map(upstreamRow);
  }

  counter(name: string): number {
    return (
      (this.sql('SELECT value FROM counters WHERE name = ?').get(name) as { value: number } | undefined)
        ?.value ?? 0
    );
  }

  rejections(): RejectionRow[] {
    return (this.sql('SELECT * FROM rejections ORDER BY received_at DESC, code').all() as Row[]).map((r) => ({
      code: r.code as string,
      bundleIds: JSON.parse(r.bundle_ids as string) as string[],
      count: num(r.count),
      firstAt: num(r.first_at),
      lastAt: num(r.last_at),
      receivedAt: num(r.received_at),
    }));
  }

  planRequest(requestId: string): PlanRequestRow | undefined {
    const r = this.sql('SELECT * FROM plan_requests WHERE request_id = ?').get(requestId) as Row | undefined;
    return (
      r && {
        requestId: r.request_id as string,
        environment: r.environment as string,
        component: r.component as string,
        receivedAt: num(r.received_at),
        state: r.state as PlanRequestRow['state'],
        detail: strOrNull(r.detail),
      }
    );
  }

  apply(runId: string): ApplyRecord | undefined {
    const r = this.sql('SELECT record FROM applies WHERE run_id = ?').get(runId) as
      | { record: string }
      | undefined;
    return r ? (JSON.parse(r.record) as ApplyRecord) : undefined;
  }

  appliesIn(state: string): ApplyRecord[] {
    return (
      this.sql('SELECT record FROM applies WHERE state = ? ORDER BY run_id LIMIT 1000').all(state) as Array<{
        record: string;
      }>
    ).map((r) => JSON.parse(r.record) as ApplyRecord);
  }

  close(): void {
    this.db.close();
  }
}
