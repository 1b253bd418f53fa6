import type Database from 'better-sqlite3';
import type { AgentWriteSet, BlobUpdate } from '../../ports/AgentStorage.js';

/** A prepared statement from the adapter's cache (compiled once per connection). */
export type Sql = (text: string) => Database.Statement;

const BLOB_COLUMNS: Record<Exclude<keyof BlobUpdate, 'sha256'>, string> = {
  size: 'size',
  contentType: 'content_type',
  data: 'data',
  runId: 'run_id',
  status: 'status',
  createdAt: 'created_at',
  announcedAt: 'announced_at',
  uploadedAt: 'uploaded_at',
  uploadUpstream: 'upload_upstream',
  ackedAt: 'acked_at',
  droppedAt: 'dropped_at',
};

/** Applies a write set with the caller's transaction open, in the order `AgentWriteSet` lists. */
export function applyWrites(sql: Sql, w: AgentWriteSet): void {
  for (const [k, v] of Object.entries(w.meta ?? {}))
    sql(
      'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
    ).run(k, v);
  for (const e of w.epochs ?? [])
    sql(
      `INSERT INTO epochs (epoch, created_at, sealed_at, acked_heads, acked_at, receipted_heads, receipted_at,
         rejected_at, pruned_at, bytes, changes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (epoch) DO UPDATE SET created_at = excluded.created_at, sealed_at = excluded.sealed_at,
         acked_heads = excluded.acked_heads, acked_at = excluded.acked_at, receipted_heads = excluded.receipted_heads,
         receipted_at = excluded.receipted_at, rejected_at = excluded.rejected_at, pruned_at = excluded.pruned_at,
         bytes = excluded.bytes, changes = excluded.changes`,
    ).run(
      e.epoch,
      e.createdAt,
      e.sealedAt,
      JSON.stringify(e.ackedHeads),
      e.ackedAt,
      JSON.stringify(e.receiptedHeads),
      e.receiptedAt,
      e.rejectedAt,
      e.prunedAt,
      e.bytes,
      e.changes,
    );
  for (const e of w.chunkResets ?? []) sql('DELETE FROM chunks WHERE epoch = ?').run(e);
  for (const c of w.chunks ?? []) sql('INSERT INTO chunks (epoch, data) VALUES (?, ?)').run(c.epoch, c.data);
  for (const r of w.runs ?? [])
    sql(
      `INSERT INTO runs (run_id, epoch, environment, component, status, plan_hash, finished_at, recorded_at,
         unchanged, detail_blob, cell_ref, acked_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      r.runId,
      r.epoch,
      r.environment,
      r.component,
      r.status,
      r.planHash,
      r.finishedAt,
      r.recordedAt,
      r.unchanged ? 1 : 0,
      r.detailBlob,
      r.cellRef,
      r.ackedAt,
    );
  for (const a of w.runAcks ?? [])
    sql('UPDATE runs SET acked_at = ? WHERE run_id = ?').run(a.ackedAt, a.runId);
  for (const e of w.ackedRunsDeleted ?? [])
    sql('DELETE FROM runs WHERE epoch = ? AND acked_at IS NOT NULL').run(e);
  for (const b of w.blobs ?? [])
    sql(
      `INSERT OR IGNORE INTO blobs (sha256, size, content_type, data, run_id, status, created_at, announced_at,
         uploaded_at, upload_upstream, acked_at, dropped_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      b.sha256,
      b.size,
      b.contentType,
      b.data,
      b.runId,
      b.status,
      b.createdAt,
      b.announcedAt,
      b.uploadedAt,
      b.uploadUpstream,
      b.ackedAt,
      b.droppedAt,
    );
  for (const u of w.blobUpdates ?? []) updateBlob(sql, u);
  for (const p of w.pushes ?? [])
    sql(
      `INSERT OR REPLACE INTO pushes (bundle_id, epoch, heads, bytes, created_at, upstream, receipt, receipt_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      p.bundleId,
      p.epoch,
      JSON.stringify(p.heads),
      p.bytes,
      p.createdAt,
      p.upstream,
      p.receipt,
      p.receiptAt,
    );
  for (const u of w.upstreams ?? [])
    sql(
      `INSERT INTO upstreams (url, cursor, last_ok_at, last_error_at, last_error, consecutive_failures)
       VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (url) DO UPDATE SET cursor = excluded.cursor, last_ok_at = excluded.last_ok_at,
         last_error_at = excluded.last_error_at, last_error = excluded.last_error,
         consecutive_failures = excluded.consecutive_failures`,
    ).run(u.url, u.cursor, u.lastOkAt, u.lastErrorAt, u.lastError, u.consecutiveFailures);
  for (const [k, v] of Object.entries(w.counters ?? {}))
    sql(
      'INSERT INTO counters (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value',
    ).run(k, v);
  for (const c of w.rejectionDeletes ?? []) sql('DELETE FROM rejections WHERE code = ?').run(c);
  for (const r of w.rejections ?? [])
    sql(
      `INSERT INTO rejections (code, bundle_ids, count, first_at, last_at, received_at) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (code) DO UPDATE SET bundle_ids = excluded.bundle_ids, count = excluded.count,
         first_at = excluded.first_at, last_at = excluded.last_at, received_at = excluded.received_at`,
    ).run(r.code, JSON.stringify(r.bundleIds), r.count, r.firstAt, r.lastAt, r.receivedAt);
  for (const p of w.planRequests ?? [])
    sql(
      `INSERT OR IGNORE INTO plan_requests (request_id, environment, component, received_at, state, detail)
       VALUES (?, ?, ?, ?, ?, ?)`,
    ).run(p.requestId, p.environment, p.component, p.receivedAt, p.state, p.detail);
  for (const { record, updatedAt } of w.applies ?? [])
    sql(
      `INSERT INTO applies (run_id, state, record, updated_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (run_id) DO UPDATE SET state = excluded.state, record = excluded.record, updated_at = excluded.updated_at`,
    ).run(record.apply.runId, record.apply.state, JSON.stringify(record), updatedAt);
  if (w.heldCleared) {
    sql('DELETE FROM held_cells').run();
    sql('DELETE FROM held_runs').run();
  }
  for (const h of w.heldCells ?? [])
    sql(
      `INSERT INTO held_cells (cell_key, epoch, cell, held_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (cell_key) DO UPDATE SET epoch = excluded.epoch, cell = excluded.cell, held_at = excluded.held_at`,
    ).run(h.cellKey, h.epoch, h.cell, h.heldAt);
  for (const h of w.heldRuns ?? [])
    sql(
      `INSERT INTO held_runs (run_id, epoch, run, held_at, wait_until) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (run_id) DO UPDATE SET epoch = excluded.epoch, run = excluded.run, held_at = excluded.held_at,
         wait_until = excluded.wait_until`,
    ).run(h.runId, h.epoch, h.run, h.heldAt, h.waitUntil);
}

/** One statement per distinct set of fields (a handful: announce, upload, ack, drop). */
function updateBlob(sql: Sql, u: BlobUpdate): void {
  const fields = (Object.keys(u) as Array<keyof BlobUpdate>)
    .filter((k): k is Exclude<keyof BlobUpdate, 'sha256'> => k !== 'sha256' && u[k] !== undefined)
    .sort();
  if (fields.length === 0) return;
  const set = fields.map((f) => `${BLOB_COLUMNS[f]} = ?`).join(', ');
  sql(`UPDATE blobs SET ${set} WHERE sha256 = ?`).run(...fields.map((f) => u[f] ?? null), u.sha256);
}
