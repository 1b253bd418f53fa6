import * as A from '@automerge/automerge';
import {
  type AckPayload,
  type ControlPayload,
  cellKey,
  type DocBundleState,
  docId,
  parseDocId,
} from '@driftline/protocol';
import type Database from 'better-sqlite3';
import {
  type AgentAutomergeDoc,
  latestCells,
  newEpochDoc,
  readCell,
  recordRun,
  sealEpoch,
  updateFacts,
} from '../../core/doc/agentDoc.js';
import { canonicalJson } from '../../core/plan/canonical.js';
import type {
  AckResult,
  AgentStore,
  PendingDelta,
  RecordRunInput,
  RecordRunResult,
  StoreStatus,
} from '../../ports/AgentStore.js';
import type { BlobToUpload } from '../../ports/Uplink.js';
import { AGENT_MIGRATIONS } from './agentSchema.js';
import { openDatabase, StoreOpenError } from './openDatabase.js';
import { enforceQueueBound, queueBytes } from './queueBound.js';
import { readStatus } from './storeStatus.js';

export interface SqliteAgentStoreOptions {
  path: string;
  site: string;
  agent: string;
  /** Seal the epoch once its stored document passes this many bytes (DESIGN C1). */
  maxDocBytes?: number;
  /** Bound on queued bytes on disk (documents + blobs), D5. */
  maxQueueBytes?: number;
  /**
   * Seal the epoch after this many changes too: loading cost follows the number of changes more than
   * their bytes (DESIGN C1: load and merge cost must not grow with the deployment's age).
   */
  maxDocChanges?: number;
  /** Rewrite an epoch's incremental chunks as one snapshot after this many (loading a snapshot is fast). */
  compactAfterChunks?: number;
  /** Re-send changes a relay receipted but the hub never acknowledged after this long. */
  resendAfterMs?: number;
  now?: () => number;
}

/** The agent's store: its Automerge epochs, runs and blobs in one SQLite file. */
export class SqliteAgentStore implements AgentStore {
  readonly db: Database.Database;
  private readonly opts: Required<SqliteAgentStoreOptions>;
  private epoch: number;
  private doc: AgentAutomergeDoc;
  /** Unacknowledged runs, kept in memory (counting them per record would grow with weeks offline). */
  private unacked = 0;
  /** Queue bytes as last measured plus what was added since; the bound is re-measured exactly when near. */
  private queueEstimate = 0;

  private readonly statements = new Map<string, Database.Statement>();

  /** A prepared statement, compiled once per store: `record` runs a dozen of them per plan result. */
  private sql(text: string): Database.Statement {
    let s = this.statements.get(text);
    if (!s) {
      s = this.db.prepare(text);
      this.statements.set(text, s);
    }
    return s;
  }

  constructor(options: SqliteAgentStoreOptions) {
    this.opts = {
      maxDocBytes: 512 * 1024,
      maxQueueBytes: 512 * 1024 * 1024,
      maxDocChanges: 2000,
      compactAfterChunks: 16,
      resendAfterMs: 6 * 3600_000,
      now: Date.now,
      ...options,
    };
    this.db = openDatabase(options.path, AGENT_MIGRATIONS);
    this.checkIdentity();
    const current = this.sql('SELECT max(epoch) AS e FROM epochs').get() as { e: number | null };
    if (current.e === null) {
      this.epoch = 1;
      this.doc = newEpochDoc(this.opts.site, this.opts.agent, 1);
      this.db.transaction(() => this.startEpoch(1, this.doc))();
    } else {
      this.epoch = current.e;
      this.doc = this.loadEpoch(current.e);
    }
    this.unacked = (
      this.sql('SELECT count(*) AS n FROM runs WHERE acked_at IS NULL').get() as { n: number }
    ).n;
    this.queueEstimate = queueBytes(this.db);
  }

  private checkIdentity(): void {
    const get = (k: string) =>
      (this.sql('SELECT value FROM meta WHERE key = ?').get(k) as { value: string } | undefined)?.value;
    const site = get('site');
    const agent = get('agent');
    if (site === undefined) {
      const put = this.sql('INSERT INTO meta (key, value) VALUES (?, ?)');
      this.db.transaction(() => {
        put.run('site', this.opts.site);
        put.run('agent', this.opts.agent);
      })();
    } else if (site !== this.opts.site || agent !== this.opts.agent) {
      throw new StoreOpenError(
        `the store at ${this.opts.path} belongs to ${site}/${agent}, not ${this.opts.site}/${this.opts.agent} ` +
          '(point data_dir at this agent’s own directory)',
      );
    }
  }

  private startEpoch(epoch: number, doc: AgentAutomergeDoc): void {
    const snapshot = A.save(doc);
    this.db
      .prepare('INSERT INTO epochs (epoch, created_at, bytes) VALUES (?, ?, ?)')
      .run(epoch, this.opts.now(), snapshot.length);
    this.sql('INSERT INTO chunks (epoch, data) VALUES (?, ?)').run(epoch, snapshot);
  }

  /** Loads an epoch's document from its snapshot and incremental chunks. */
  loadEpoch(epoch: number): AgentAutomergeDoc {
    const rows = this.sql('SELECT data FROM chunks WHERE epoch = ? ORDER BY id').all(epoch) as Array<{
      data: Buffer;
    }>;
    if (rows.length === 0)
      throw new StoreOpenError(`epoch ${epoch} has no stored document (the store is damaged)`);
    return A.load(Buffer.concat(rows.map((r) => r.data)));
  }

  private appendChunk(epoch: number, before: AgentAutomergeDoc, after: AgentAutomergeDoc): void {
    const chunk = A.saveSince(after, A.getHeads(before));
    if (chunk.length === 0) return;
    this.sql('INSERT INTO chunks (epoch, data) VALUES (?, ?)').run(epoch, chunk);
    this.db
      .prepare('UPDATE epochs SET bytes = bytes + ?, changes = changes + 1 WHERE epoch = ?')
      .run(chunk.length, epoch);
  }

  private compact(epoch: number, doc: AgentAutomergeDoc): void {
    const snapshot = A.save(doc);
    this.sql('DELETE FROM chunks WHERE epoch = ?').run(epoch);
    this.sql('INSERT INTO chunks (epoch, data) VALUES (?, ?)').run(epoch, snapshot);
    this.sql('UPDATE epochs SET bytes = ? WHERE epoch = ?').run(snapshot.length, epoch);
  }

  record(input: RecordRunInput): RecordRunResult {
    const now = this.opts.now();
    const before = this.doc;
    let sealed = false;
    let nextDoc: AgentAutomergeDoc = before;
    let nextEpoch = this.epoch;
    let unchanged = false;
    const tx = this.db.transaction(() => {
      const depth = this.unackedSummary();
      const facts = input.facts
        ? {
            ...input.facts,
            queueDepth: depth.count + 1,
            oldestUnsentAt: depth.oldest ?? Date.parse(input.summary.finishedAt),
            reportedAt: now,
          }
        : undefined;
      const r = recordRun(
        before,
        {
          runId: input.runId,
          summary: input.summary,
          detailBlob: input.detail?.sha256,
          recordedAt: now,
          lockedStreak: input.lockedStreak,
        },
        facts,
      );
      unchanged = r.unchanged;
      nextDoc = r.doc;
      this.appendChunk(this.epoch, before, nextDoc);
      this.db
        .prepare(
          `INSERT INTO runs (run_id, epoch, environment, component, status, plan_hash, finished_at, recorded_at, unchanged, detail_blob)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(
          input.runId,
          this.epoch,
          input.summary.environment,
          input.summary.component,
          input.summary.status,
          input.summary.planHash ?? null,
          Date.parse(input.summary.finishedAt),
          now,
          unchanged ? 1 : 0,
          unchanged ? null : (input.detail?.sha256 ?? null),
        );
      if (input.detail && !unchanged) {
        this.db
          .prepare(
            `INSERT OR IGNORE INTO blobs (sha256, size, content_type, data, run_id, status, created_at)
             VALUES (?, ?, ?, ?, ?, ?, ?)`,
          )
          .run(
            input.detail.sha256,
            input.detail.bytes.length,
            input.detail.contentType,
            input.detail.bytes,
            input.runId,
            input.summary.status,
            now,
          );
      }
      const { bytes, chunks, changes } = this.db
        .prepare(
          'SELECT e.bytes AS bytes, e.changes AS changes, (SELECT count(*) FROM chunks c WHERE c.epoch = e.epoch) AS chunks FROM epochs e WHERE epoch = ?',
        )
        .get(this.epoch) as { bytes: number; chunks: number; changes: number };
      if (bytes > this.opts.maxDocBytes || changes >= this.opts.maxDocChanges) {
        const sealedDoc = sealEpoch(nextDoc, now);
        this.compact(this.epoch, sealedDoc);
        this.sql('UPDATE epochs SET sealed_at = ? WHERE epoch = ?').run(now, this.epoch);
        nextEpoch = this.epoch + 1;
        nextDoc = newEpochDoc(this.opts.site, this.opts.agent, nextEpoch, latestCells(sealedDoc));
        this.startEpoch(nextEpoch, nextDoc);
        sealed = true;
      } else if (chunks > this.opts.compactAfterChunks) {
        this.compact(this.epoch, nextDoc);
      }
      this.queueEstimate += (input.detail && !unchanged ? input.detail.bytes.length : 0) + 512;
      if (sealed || this.queueEstimate > this.opts.maxQueueBytes * 0.9) {
        enforceQueueBound(this.db, this.opts.maxQueueBytes, now);
        this.queueEstimate = queueBytes(this.db);
      }
    });
    try {
      tx.immediate();
    } catch (e) {
      // The in-memory document was advanced past what was committed (Automerge allows one successor per
      // document state): rebuild it from what SQLite holds so the next record starts from the truth.
      this.doc = this.loadEpoch(this.epoch);
      throw e;
    }
    this.doc = nextDoc;
    this.epoch = nextEpoch;
    this.unacked++;
    return { epoch: this.epoch, unchanged, sealed };
  }

  /** Writes the bundles-to-outposts delivery states into the document, so they travel as facts. */
  setBundleStates(states: Record<string, DocBundleState>): void {
    const before = this.doc;
    const next = A.change(before, { message: 'bundles', time: Math.floor(this.opts.now() / 1000) }, (d) => {
      const want = JSON.parse(JSON.stringify(states)) as Record<string, DocBundleState>;
      if (!d.bundles) d.bundles = {};
      for (const [id, v] of Object.entries(want))
        if (JSON.stringify(d.bundles[id]) !== JSON.stringify(v)) d.bundles[id] = v;
    });
    if (A.getHeads(next).join() === A.getHeads(before).join()) return;
    this.db.transaction(() => this.appendChunk(this.epoch, before, next)).immediate();
    this.doc = next;
  }

  updateFacts(facts: NonNullable<RecordRunInput['facts']>): boolean {
    const now = this.opts.now();
    const before = this.doc;
    const depth = this.unackedSummary();
    const full = { ...facts, queueDepth: depth.count, oldestUnsentAt: depth.oldest ?? undefined };
    // Nothing to tell when only the report time would change.
    const current = before.facts
      ? (JSON.parse(JSON.stringify(before.facts)) as Record<string, unknown>)
      : null;
    if (current) {
      const { reportedAt: _r, ...was } = current;
      if (canonicalJson(was) === canonicalJson(full)) return false;
    }
    const next = updateFacts(before, { ...full, reportedAt: now }, now);
    if (A.getHeads(next).join() === A.getHeads(before).join()) return false;
    try {
      this.db.transaction(() => this.appendChunk(this.epoch, before, next)).immediate();
    } catch (e) {
      this.doc = this.loadEpoch(this.epoch);
      throw e;
    }
    this.doc = next;
    return true;
  }

  private unackedSummary(): { count: number; oldest: number | null } {
    // min() over the (acked_at, finished_at) index is a seek, not a scan.
    const r = this.sql('SELECT min(finished_at) AS oldest FROM runs WHERE acked_at IS NULL').get() as {
      oldest: number | null;
    };
    return { count: this.unacked, oldest: r.oldest };
  }

  lockedStreak(environment: string, component: string): number {
    const rows = this.db
      .prepare(
        'SELECT status FROM runs WHERE environment = ? AND component = ? ORDER BY run_id DESC LIMIT 1000',
      )
      .all(environment, component) as Array<{ status: string }>;
    let n = 0;
    for (const r of rows) {
      if (r.status !== 'locked') break;
      n++;
    }
    return n;
  }

  private docFor(epoch: number): AgentAutomergeDoc {
    return epoch === this.epoch ? this.doc : this.loadEpoch(epoch);
  }

  pending(): PendingDelta[] {
    const now = this.opts.now();
    const epochs = this.db
      .prepare(
        'SELECT epoch, sealed_at, acked_heads, receipted_heads, receipted_at, acked_at FROM epochs WHERE pruned_at IS NULL ORDER BY epoch',
      )
      .all() as Array<{
      epoch: number;
      sealed_at: number | null;
      acked_heads: string;
      receipted_heads: string;
      receipted_at: number | null;
      acked_at: number | null;
    }>;
    const out: PendingDelta[] = [];
    for (const e of epochs) {
      const doc = this.docFor(e.epoch);
      const heads = A.getHeads(doc);
      const acked = JSON.parse(e.acked_heads) as string[];
      const receiptFresh =
        e.receipted_at !== null &&
        now - e.receipted_at < this.opts.resendAfterMs &&
        (e.acked_at ?? 0) <= e.receipted_at;
      const since = receiptFresh ? (JSON.parse(e.receipted_heads) as string[]) : acked;
      const changes = sameHeads(since, heads) ? new Uint8Array(0) : A.saveSince(doc, since);
      const blobs = this.db
        .prepare(
          `SELECT b.sha256, b.size, b.content_type, b.run_id FROM blobs b JOIN runs r ON r.run_id = b.run_id
           WHERE r.epoch = ? AND b.announced_at IS NULL AND b.acked_at IS NULL AND b.dropped_at IS NULL`,
        )
        .all(e.epoch) as Array<{ sha256: string; size: number; content_type: string; run_id: string }>;
      if (changes.length === 0 && blobs.length === 0) continue;
      const failure = this.db
        .prepare(
          `SELECT 1 FROM runs WHERE epoch = ? AND acked_at IS NULL AND status IN ('failed','locked','redaction-failed') LIMIT 1`,
        )
        .get(e.epoch);
      out.push({
        epoch: e.epoch,
        docId: docId(this.opts.site, this.opts.agent, e.epoch),
        changes,
        heads,
        sealed: e.sealed_at !== null,
        blobs: blobs.map((b) => ({
          sha256: b.sha256 as never,
          size: b.size,
          contentType: b.content_type,
          runId: b.run_id as never,
        })),
        hasFailure: !!failure,
      });
    }
    return out;
  }

  recordPush(p: {
    bundleId: string;
    epoch: number;
    heads: string[];
    bytes: number;
    upstream: string;
    receipt: string | null;
    blobs: string[];
  }): void {
    const now = this.opts.now();
    this.db.transaction(() => {
      this.db
        .prepare(
          'INSERT OR REPLACE INTO pushes (bundle_id, epoch, heads, bytes, created_at, upstream, receipt, receipt_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
        )
        .run(
          p.bundleId,
          p.epoch,
          JSON.stringify(p.heads),
          p.bytes,
          now,
          p.upstream,
          p.receipt,
          p.receipt ? now : null,
        );
      if (p.receipt === 'stored' || p.receipt === 'duplicate') {
        this.db
          .prepare('UPDATE epochs SET receipted_heads = ?, receipted_at = ? WHERE epoch = ?')
          .run(JSON.stringify(p.heads), now, p.epoch);
        const announce = this.sql('UPDATE blobs SET announced_at = ? WHERE sha256 = ?');
        for (const sha of p.blobs) announce.run(now, sha);
      }
      this.upstreamResult(p.upstream, p.receipt ? null : 'no receipt');
    })();
  }

  recordPushFailure(upstream: string, error: string): void {
    this.upstreamResult(upstream, error);
  }

  private upstreamResult(url: string, error: string | null): void {
    const now = this.opts.now();
    this.sql('INSERT OR IGNORE INTO upstreams (url) VALUES (?)').run(url);
    if (error === null) {
      this.db
        .prepare('UPDATE upstreams SET last_ok_at = ?, consecutive_failures = 0 WHERE url = ?')
        .run(now, url);
    } else {
      this.db
        .prepare(
          'UPDATE upstreams SET last_error_at = ?, last_error = ?, consecutive_failures = consecutive_failures + 1 WHERE url = ?',
        )
        .run(now, error.slice(0, 500), url);
    }
  }

  applyAck(ack: AckPayload): AckResult {
    const now = this.opts.now();
    const parsed = parseDocId(ack.doc);
    const result: AckResult = { runsAcked: 0, epochsPruned: [], blobsDeleted: 0, unknownEpoch: false };
    const row =
      parsed && parsed.site === this.opts.site && parsed.agent === this.opts.agent
        ? (this.db
            .prepare('SELECT epoch, sealed_at, pruned_at FROM epochs WHERE epoch = ?')
            .get(parsed.epoch) as
            | { epoch: number; sealed_at: number | null; pruned_at: number | null }
            | undefined)
        : undefined;
    this.db
      .transaction(() => {
        const del = this.sql(
          'UPDATE blobs SET data = NULL, acked_at = ? WHERE sha256 = ? AND acked_at IS NULL',
        );
        for (const sha of ack.blobs) result.blobsDeleted += del.run(now, sha).changes;
        if (!row || row.pruned_at !== null) {
          result.unknownEpoch = !row;
          return;
        }
        const doc = this.docFor(row.epoch);
        if (!A.hasHeads(doc, ack.heads)) return; // heads we never wrote: ignore, never prune on a guess
        const view = A.view(doc, ack.heads);
        const runs = this.db
          .prepare(
            'SELECT run_id, environment, component, finished_at, unchanged FROM runs WHERE epoch = ? AND acked_at IS NULL',
          )
          .all(row.epoch) as Array<{
          run_id: string;
          environment: string;
          component: string;
          finished_at: number;
          unchanged: number;
        }>;
        const mark = this.sql('UPDATE runs SET acked_at = ? WHERE run_id = ?');
        for (const r of runs) {
          const atHub = r.unchanged
            ? (readCell(view, cellKey(r.environment, r.component))?.plannedAt ?? 0) >= r.finished_at
            : view.runs?.[r.run_id] !== undefined;
          if (atHub) result.runsAcked += mark.run(now, r.run_id).changes;
        }
        this.db
          .prepare('UPDATE epochs SET acked_heads = ?, acked_at = ? WHERE epoch = ?')
          .run(JSON.stringify(ack.heads), now, row.epoch);
        if (row.sealed_at !== null && sameHeads(ack.heads, A.getHeads(doc))) {
          this.sql('DELETE FROM chunks WHERE epoch = ?').run(row.epoch);
          this.sql('DELETE FROM runs WHERE epoch = ? AND acked_at IS NOT NULL').run(row.epoch);
          this.sql('UPDATE epochs SET pruned_at = ?, bytes = 0 WHERE epoch = ?').run(now, row.epoch);
          result.epochsPruned.push(row.epoch);
        }
      })
      .immediate();
    this.unacked -= result.runsAcked;
    this.queueEstimate = queueBytes(this.db);
    return result;
  }

  downlinkCursor(upstream: string): string | undefined {
    const r = this.sql('SELECT cursor FROM upstreams WHERE url = ?').get(upstream) as
      | { cursor: string | null }
      | undefined;
    return r?.cursor ?? undefined;
  }

  setDownlinkCursor(upstream: string, cursor: string): void {
    this.db
      .prepare(
        'INSERT INTO upstreams (url, cursor) VALUES (?, ?) ON CONFLICT(url) DO UPDATE SET cursor = excluded.cursor',
      )
      .run(upstream, cursor);
  }

  recordPlanRequest(
    req: Extract<ControlPayload, { type: 'plan-request' }>,
    state: 'accepted' | 'refused' | 'expired',
    detail: string | null,
  ): boolean {
    const r = this.db
      .prepare(
        'INSERT OR IGNORE INTO plan_requests (request_id, environment, component, received_at, state, detail) VALUES (?, ?, ?, ?, ?, ?)',
      )
      .run(req.requestId, req.environment, req.component, this.opts.now(), state, detail);
    return r.changes === 1;
  }

  blobsToUpload(limit = 20): BlobToUpload[] {
    const rows = this.db
      .prepare(
        `SELECT sha256, size, content_type, run_id, data FROM blobs
         WHERE data IS NOT NULL AND uploaded_at IS NULL AND acked_at IS NULL ORDER BY created_at LIMIT ?`,
      )
      .all(limit) as Array<{
      sha256: string;
      size: number;
      content_type: string;
      run_id: string | null;
      data: Buffer;
    }>;
    return rows.map((r) => ({
      sha256: r.sha256,
      size: r.size,
      contentType: r.content_type,
      runId: r.run_id ?? undefined,
      data: new Uint8Array(r.data.buffer, r.data.byteOffset, r.data.byteLength),
    }));
  }

  markBlobUploaded(sha256: string, upstream: string): void {
    this.db
      .prepare('UPDATE blobs SET uploaded_at = ?, upload_upstream = ? WHERE sha256 = ?')
      .run(this.opts.now(), upstream, sha256);
  }

  status(): StoreStatus {
    return readStatus(this.db, {
      site: this.opts.site,
      agent: this.opts.agent,
      epoch: this.epoch,
      maxQueueBytes: this.opts.maxQueueBytes,
      queueBytes: queueBytes(this.db),
      pendingChangeBytes: this.pending().reduce((n, d) => n + d.changes.length, 0),
    });
  }

  close(): void {
    this.db.close();
  }
}

function sameHeads(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((h) => b.includes(h));
}
