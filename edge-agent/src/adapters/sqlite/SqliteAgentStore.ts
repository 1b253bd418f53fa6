import * as A from '@automerge/automerge';
import {
  type AckPayload,
  type ControlPayload,
  cellKey,
  type DocBundleState,
  docId,
  parseDocId,
  type RejectionPayload,
} from '@driftline/protocol';
import type Database from 'better-sqlite3';
import {
  type AgentAutomergeDoc,
  latestCells,
  mergeFacts,
  newEpochDoc,
  plainFacts,
  readCell,
  recordRuns,
  sealEpoch,
  updateFacts,
  writeApply,
} from '../../core/doc/agentDoc.js';
import { canonicalJson } from '../../core/plan/canonical.js';
import type {
  AckResult,
  AgentRejection,
  AgentStore,
  PendingDelta,
  RecordRunInput,
  RecordRunResult,
  StoredDetail,
  StoreStatus,
} from '../../ports/AgentStore.js';
import type { ApplyRecord, ApplyStore } from '../../ports/ApplyStore.js';
import type { BlobToUpload } from '../../ports/Uplink.js';
import { AGENT_MIGRATIONS } from './agentSchema.js';
import { appliesIn, laterRun, readApply, saveApply } from './applies.js';
import { openDatabase, StoreOpenError } from './openDatabase.js';
import { enforceQueueBound, queueBytes } from './queueBound.js';
import { ackOutdates, clearRejections, readRejections, recordRejection } from './rejections.js';
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
  /**
   * Re-send changes a relay receipted but the hub never acknowledged after this long (a relay that lost
   * what it receipted). Default 6 hours.
   */
  resendAfterMs?: number;
  /** Re-send changes the hub rejected this long after the rejection arrived. Default 5 minutes. */
  rejectedRetryMs?: number;
  /** SQLite page cache of this store's connection, in KiB. */
  cacheKiB?: number;
  now?: () => number;
}

/** The agent's store: its Automerge epochs, runs and blobs in one SQLite file. */
export class SqliteAgentStore implements AgentStore, ApplyStore {
  readonly db: Database.Database;
  private readonly opts: Required<SqliteAgentStoreOptions>;
  private epoch: number;
  private doc: AgentAutomergeDoc;
  /** The current document's facts as plain data, so recording never reads them back through proxies. */
  private facts: Record<string, unknown> | null = null;
  /**
   * Committed write transactions (each one fsync of the WAL under synchronous=FULL) and Automerge
   * documents loaded from disk / freed again: what `stats()` reports, and what tests assert on.
   */
  private readonly counts = { commits: 0, docsLoaded: 0, docsHeld: 1 };
  /** Bytes of `saveSince` per sealed epoch for the `since` heads it was computed from (sealed = immutable). */
  private readonly sealedPendingBytes = new Map<number, { since: string; bytes: number }>();
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
      rejectedRetryMs: 300_000,
      cacheKiB: 4096,
      now: Date.now,
      ...options,
    };
    this.db = openDatabase(options.path, AGENT_MIGRATIONS);
    // better-sqlite3 builds SQLite with a 16 MB page cache per connection, which a store of hundreds of
    // MB after weeks offline fills. The agent's working set (the current epoch's chunks, the recent runs
    // and their index pages) fits in a few MB; the OS page cache holds the rest.
    this.db.pragma(`cache_size = -${this.opts.cacheKiB}`);
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
    this.facts = plainFacts(this.doc);
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

  /**
   * Loads an epoch's document: its snapshot (the first chunk, compaction keeps it so), then the
   * incremental chunks written since. The caller owns the result: free it with `A.free` when done
   * (Automerge's WASM heap never shrinks, and its finalizer runs only when V8 happens to collect).
   */
  loadEpoch(epoch: number): AgentAutomergeDoc {
    const rows = this.sql('SELECT data FROM chunks WHERE epoch = ? ORDER BY id').all(epoch) as Array<{
      data: Buffer;
    }>;
    const [first, ...rest] = rows;
    if (!first) throw new StoreOpenError(`epoch ${epoch} has no stored document (the store is damaged)`);
    // load + loadIncremental: a snapshot with 16 chunks appended loads about twice as fast this way as
    // one A.load of the concatenation.
    const doc = A.load(first.data);
    this.counts.docsLoaded++;
    return rest.length === 0 ? doc : A.loadIncremental(doc, Buffer.concat(rest.map((r) => r.data)));
  }

  /** Frees a document this store loaded or replaced and no longer needs. */
  private release(doc: AgentAutomergeDoc): void {
    A.free(doc);
    this.counts.docsHeld--;
  }

  /** Runs `fn` on an epoch's document, loading (and freeing afterwards) any but the current one. */
  private withDoc<T>(epoch: number, fn: (doc: AgentAutomergeDoc) => T): T {
    if (epoch === this.epoch) return fn(this.doc);
    const doc = this.loadEpoch(epoch);
    this.counts.docsHeld++;
    try {
      return fn(doc);
    } finally {
      this.release(doc);
    }
  }

  /** Commits `fn` in one immediate transaction, counted (one WAL fsync each, synchronous=FULL). */
  private commit(fn: () => void): void {
    this.db.transaction(fn).immediate();
    this.counts.commits++;
  }

  /**
   * What this store has done so far: write transactions committed (each one WAL fsync), Automerge
   * documents loaded from disk, and documents it holds now (the current epoch's, plus any it loaded
   * for itself and has not freed; one `loadEpoch` hands to a caller is the caller's).
   */
  stats(): { commits: number; docsLoaded: number; docsHeld: number } {
    return { ...this.counts };
  }

  /** Stores the change from `before` to `after`; `entries` is how many recorded entries it holds. */
  private appendChunk(epoch: number, before: AgentAutomergeDoc, after: AgentAutomergeDoc, entries = 1): void {
    const chunk = A.saveSince(after, A.getHeads(before));
    if (chunk.length === 0) return;
    this.sql('INSERT INTO chunks (epoch, data) VALUES (?, ?)').run(epoch, chunk);
    this.sql('UPDATE epochs SET bytes = bytes + ?, changes = changes + ? WHERE epoch = ?').run(
      chunk.length,
      entries,
      epoch,
    );
  }

  private compact(epoch: number, doc: AgentAutomergeDoc): void {
    const snapshot = A.save(doc);
    this.sql('DELETE FROM chunks WHERE epoch = ?').run(epoch);
    this.sql('INSERT INTO chunks (epoch, data) VALUES (?, ?)').run(epoch, snapshot);
    this.sql('UPDATE epochs SET bytes = ? WHERE epoch = ?').run(snapshot.length, epoch);
  }

  record(input: RecordRunInput): RecordRunResult {
    return this.recordMany([input])[0] as RecordRunResult;
  }

  /**
   * Records runs that finished together: one Automerge change, one SQLite transaction, one fsync for
   * all of them. Nothing of the batch is durable, or reported recorded, before that commit; if it
   * fails, none of it is (and the caller may record them one by one).
   */
  recordMany(inputs: readonly RecordRunInput[]): RecordRunResult[] {
    if (inputs.length === 0) return [];
    const now = this.opts.now();
    const before = this.doc;
    const last = inputs.at(-1) as RecordRunInput;
    let sealed = false;
    let nextDoc: AgentAutomergeDoc = before;
    let nextFacts = this.facts;
    let nextEpoch = this.epoch;
    let unchanged: boolean[] = [];
    let sealedDoc: AgentAutomergeDoc | null = null;
    const recordedIn = this.epoch;
    const tx = () => {
      const depth = this.unackedSummary();
      const firstFinished = Math.min(...inputs.map((i) => Date.parse(i.summary.finishedAt)));
      const facts = last.facts
        ? {
            ...last.facts,
            queueDepth: depth.count + inputs.length,
            oldestUnsentAt: Math.min(depth.oldest ?? firstFinished, firstFinished),
            reportedAt: now,
          }
        : undefined;
      const r = recordRuns(
        before,
        inputs.map((input) => ({
          runId: input.runId,
          summary: input.summary,
          // Read only for a run that is stored (an unchanged plan's detail is never packed).
          get detailBlob() {
            return input.detail ? storedDetail(input).sha256 : undefined;
          },
          recordedAt: now,
          lockedStreak: input.lockedStreak,
          cellRef: input.cellRef,
        })),
        facts,
        this.facts,
      );
      unchanged = r.unchanged;
      nextDoc = r.doc;
      if (facts) nextFacts = mergeFacts(this.facts, facts);
      this.appendChunk(this.epoch, before, nextDoc, inputs.length);
      const insertRun = this.sql(
        `INSERT INTO runs (run_id, epoch, environment, component, status, plan_hash, finished_at, recorded_at, unchanged, detail_blob, cell_ref)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      );
      const insertBlob = this.sql(
        `INSERT OR IGNORE INTO blobs (sha256, size, content_type, data, run_id, status, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?)`,
      );
      let added = 0;
      for (const [i, input] of inputs.entries()) {
        const same = unchanged[i] === true;
        // An unchanged plan's detail is never stored: it is packed only when it will be.
        const detail = input.detail && !same ? storedDetail(input) : undefined;
        insertRun.run(
          input.runId,
          this.epoch,
          input.summary.environment,
          input.summary.component,
          input.summary.status,
          input.summary.planHash ?? null,
          Date.parse(input.summary.finishedAt),
          now,
          same ? 1 : 0,
          detail?.sha256 ?? null,
          input.cellRef ?? null,
        );
        if (detail) {
          insertBlob.run(
            detail.sha256,
            detail.bytes.length,
            detail.contentType,
            detail.bytes,
            input.runId,
            input.summary.status,
            now,
          );
        }
        added += (detail ? detail.bytes.length : 0) + 512;
      }
      const { bytes, chunks, changes } = this.sql(
        'SELECT e.bytes AS bytes, e.changes AS changes, (SELECT count(*) FROM chunks c WHERE c.epoch = e.epoch) AS chunks FROM epochs e WHERE epoch = ?',
      ).get(this.epoch) as { bytes: number; chunks: number; changes: number };
      if (bytes > this.opts.maxDocBytes || changes >= this.opts.maxDocChanges) {
        sealedDoc = sealEpoch(nextDoc, now);
        this.compact(this.epoch, sealedDoc);
        this.sql('UPDATE epochs SET sealed_at = ? WHERE epoch = ?').run(now, this.epoch);
        nextEpoch = this.epoch + 1;
        nextDoc = newEpochDoc(this.opts.site, this.opts.agent, nextEpoch, latestCells(sealedDoc));
        this.counts.docsHeld++;
        this.startEpoch(nextEpoch, nextDoc);
        nextFacts = null;
        sealed = true;
      } else if (chunks > this.opts.compactAfterChunks) {
        this.compact(this.epoch, nextDoc);
      }
      this.queueEstimate += added;
      if (sealed || this.queueEstimate > this.opts.maxQueueBytes * 0.9) {
        enforceQueueBound(this.db, this.opts.maxQueueBytes, now);
        this.queueEstimate = queueBytes(this.db);
      }
    };
    try {
      this.commit(tx);
    } catch (e) {
      // The in-memory document was advanced past what was committed (Automerge allows one successor per
      // document state): rebuild it from what SQLite holds so the next record starts from the truth.
      if (sealed) this.release(nextDoc);
      this.reloadCurrent(before);
      throw e;
    }
    if (sealedDoc) this.release(sealedDoc); // the sealed epoch's handle: only pending() reloads it now
    this.doc = nextDoc;
    this.facts = nextFacts;
    this.epoch = nextEpoch;
    this.unacked += inputs.length;
    return unchanged.map((u, i) => ({
      epoch: i === inputs.length - 1 ? this.epoch : recordedIn,
      unchanged: u,
      sealed: sealed && i === inputs.length - 1,
    }));
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
    try {
      this.commit(() => this.appendChunk(this.epoch, before, next));
    } catch (e) {
      this.reloadCurrent(before);
      throw e;
    }
    this.doc = next;
  }

  /** Records where an approval of a run stands: its row in `applies` and the document's `applies` (applies.ts). */
  setApply(rec: ApplyRecord): void {
    const before = this.doc;
    const next = writeApply(before, rec.apply, this.opts.now());
    try {
      this.commit(() => {
        saveApply(this.db, rec, this.opts.now());
        this.appendChunk(this.epoch, before, next);
      });
    } catch (e) {
      this.reloadCurrent(before);
      throw e;
    }
    this.doc = next;
  }

  applyRecord(runId: string): ApplyRecord | undefined {
    return readApply(this.db, runId);
  }

  appliesIn(state: ApplyRecord['apply']['state']): ApplyRecord[] {
    return appliesIn(this.db, state);
  }

  /** A later run of the cell with a different plan: from the runs kept, else the cell the document shows. */
  laterRun(
    environment: string,
    component: string,
    cellRef: string | undefined,
    runId: string,
  ): string | undefined {
    const cell = readCell(this.doc, cellKey(environment, component, cellRef));
    const shown = cell && cell.runId > runId ? cell.runId : undefined;
    return laterRun(this.db, environment, component, cellRef, runId) ?? shown;
  }

  updateFacts(facts: NonNullable<RecordRunInput['facts']>): boolean {
    const now = this.opts.now();
    const before = this.doc;
    const depth = this.unackedSummary();
    const full = { ...facts, queueDepth: depth.count, oldestUnsentAt: depth.oldest ?? undefined };
    // Nothing to tell when only the report time would change.
    const current = this.facts;
    if (current) {
      const { reportedAt: _r, ...was } = current;
      if (canonicalJson(was) === canonicalJson(full)) return false;
    }
    const written = { ...full, reportedAt: now };
    const next = updateFacts(before, written, now);
    if (A.getHeads(next).join() === A.getHeads(before).join()) return false;
    try {
      this.commit(() => this.appendChunk(this.epoch, before, next));
    } catch (e) {
      this.reloadCurrent(before);
      throw e;
    }
    this.doc = next;
    this.facts = mergeFacts(this.facts, written);
    return true;
  }

  /** After a failed commit: drops the advanced document and rebuilds the current one from SQLite. */
  private reloadCurrent(advanced: AgentAutomergeDoc): void {
    this.release(advanced);
    this.doc = this.loadEpoch(this.epoch);
    this.counts.docsHeld++;
    this.facts = plainFacts(this.doc);
  }

  private unackedSummary(): { count: number; oldest: number | null } {
    // min() over the (acked_at, finished_at) index is a seek, not a scan.
    const r = this.sql('SELECT min(finished_at) AS oldest FROM runs WHERE acked_at IS NULL').get() as {
      oldest: number | null;
    };
    return { count: this.unacked, oldest: r.oldest };
  }

  lockedStreak(environment: string, component: string, cellRef?: string): number {
    const rows = this.sql(
      "SELECT status FROM runs WHERE environment = ? AND component = ? AND coalesce(cell_ref, '') = ? ORDER BY run_id DESC LIMIT 1000",
    ).all(environment, component, cellRef ?? '') as Array<{ status: string }>;
    let n = 0;
    for (const r of rows) {
      if (r.status !== 'locked') break;
      n++;
    }
    return n;
  }

  pending(): PendingDelta[] {
    const out: PendingDelta[] = [];
    for (const e of this.unprunedEpochs()) {
      const since = this.sinceHeads(e);
      const delta = this.withDoc(e.epoch, (doc) => {
        const heads = A.getHeads(doc);
        return { heads, changes: sameHeads(since, heads) ? new Uint8Array(0) : A.saveSince(doc, since) };
      });
      const blobs = this.sql(
        `SELECT b.sha256, b.size, b.content_type, b.run_id FROM blobs b JOIN runs r ON r.run_id = b.run_id
         WHERE r.epoch = ? AND b.announced_at IS NULL AND b.acked_at IS NULL AND b.dropped_at IS NULL`,
      ).all(e.epoch) as Array<{ sha256: string; size: number; content_type: string; run_id: string }>;
      if (delta.changes.length === 0 && blobs.length === 0) continue;
      const failure = this.sql(
        `SELECT 1 FROM runs WHERE epoch = ? AND acked_at IS NULL AND status IN ('failed','locked','redaction-failed') LIMIT 1`,
      ).get(e.epoch);
      out.push({
        epoch: e.epoch,
        docId: docId(this.opts.site, this.opts.agent, e.epoch),
        changes: delta.changes,
        heads: delta.heads,
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

  private unprunedEpochs() {
    return this.sql(
      'SELECT epoch, sealed_at, acked_heads, receipted_heads, receipted_at, acked_at FROM epochs WHERE pruned_at IS NULL ORDER BY epoch',
    ).all() as Array<{
      epoch: number;
      sealed_at: number | null;
      acked_heads: string;
      receipted_heads: string;
      receipted_at: number | null;
      acked_at: number | null;
    }>;
  }

  /** The heads a push of this epoch starts from: the last fresh relay receipt's, else the hub's ack. */
  private sinceHeads(e: {
    acked_heads: string;
    receipted_heads: string;
    receipted_at: number | null;
    acked_at: number | null;
  }): string[] {
    const receiptFresh =
      e.receipted_at !== null &&
      this.opts.now() - e.receipted_at < this.opts.resendAfterMs &&
      (e.acked_at ?? 0) <= e.receipted_at;
    return JSON.parse(receiptFresh ? e.receipted_heads : e.acked_heads) as string[];
  }

  /**
   * Bytes of changes the next pushes would carry, for `status`. A sealed epoch never changes, so its
   * count is kept per `since` heads: status does not load every sealed epoch again (weeks offline
   * leave hundreds).
   */
  private pendingChangeBytes(): number {
    let total = 0;
    for (const e of this.unprunedEpochs()) {
      const since = this.sinceHeads(e);
      const key = since.join();
      const cached = e.sealed_at !== null ? this.sealedPendingBytes.get(e.epoch) : undefined;
      if (cached?.since === key) {
        total += cached.bytes;
        continue;
      }
      const bytes = this.withDoc(e.epoch, (doc) =>
        sameHeads(since, A.getHeads(doc)) ? 0 : A.saveSince(doc, since).length,
      );
      if (e.sealed_at !== null) this.sealedPendingBytes.set(e.epoch, { since: key, bytes });
      total += bytes;
    }
    return total;
  }

  recordPush(p: {
    bundleId: string;
    epoch: number;
    heads: string[];
    bytes: number;
    upstream: string;
    receipt: string | null;
    blobs: string[];
    sentAt?: number;
  }): void {
    const now = this.opts.now();
    const sentAt = p.sentAt ?? now;
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
      // A receipt for a bundle built before the latest rejection does not count: the rejection asked
      // for its changes again, and the relay's custody of them ends at a hub that refused them.
      const receipted =
        (p.receipt === 'stored' || p.receipt === 'duplicate') &&
        this.sql(
          'UPDATE epochs SET receipted_heads = ?, receipted_at = ? WHERE epoch = ? AND (rejected_at IS NULL OR rejected_at < ?)',
        ).run(JSON.stringify(p.heads), now, p.epoch, sentAt).changes > 0;
      if (receipted) {
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
    const result: AckResult = {
      runsAcked: 0,
      epochsPruned: [],
      blobsDeleted: 0,
      unknownEpoch: false,
      rejectionsCleared: 0,
    };
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
        if (parsed?.site === this.opts.site && parsed.agent === this.opts.agent)
          result.rejectionsCleared = ackOutdates(this.db, ack.committedAt);
        if (!row || row.pruned_at !== null) {
          result.unknownEpoch = !row;
          return;
        }
        this.withDoc(row.epoch, (doc) => this.ackEpoch(row, doc, ack, now, result));
      })
      .immediate();
    this.counts.commits++;
    this.unacked -= result.runsAcked;
    this.queueEstimate = queueBytes(this.db);
    return result;
  }

  private ackEpoch(
    row: { epoch: number; sealed_at: number | null },
    doc: AgentAutomergeDoc,
    ack: AckPayload,
    now: number,
    result: AckResult,
  ): void {
    if (!A.hasHeads(doc, ack.heads)) return; // heads we never wrote: ignore, never prune on a guess
    const view = A.view(doc, ack.heads);
    const runs = this.sql(
      'SELECT run_id, environment, component, cell_ref, finished_at, unchanged FROM runs WHERE epoch = ? AND acked_at IS NULL',
    ).all(row.epoch) as Array<{
      run_id: string;
      environment: string;
      component: string;
      cell_ref: string | null;
      finished_at: number;
      unchanged: number;
    }>;
    const mark = this.sql('UPDATE runs SET acked_at = ? WHERE run_id = ?');
    for (const r of runs) {
      const atHub = r.unchanged
        ? (readCell(view, cellKey(r.environment, r.component, r.cell_ref))?.plannedAt ?? 0) >= r.finished_at
        : view.runs?.[r.run_id] !== undefined;
      if (atHub) result.runsAcked += mark.run(now, r.run_id).changes;
    }
    this.sql('UPDATE epochs SET acked_heads = ?, acked_at = ? WHERE epoch = ?').run(
      JSON.stringify(ack.heads),
      now,
      row.epoch,
    );
    if (row.sealed_at !== null && sameHeads(ack.heads, A.getHeads(doc))) {
      this.sql('DELETE FROM chunks WHERE epoch = ?').run(row.epoch);
      this.sql('DELETE FROM runs WHERE epoch = ? AND acked_at IS NOT NULL').run(row.epoch);
      this.sql('UPDATE epochs SET pruned_at = ?, bytes = 0 WHERE epoch = ?').run(now, row.epoch);
      result.epochsPruned.push(row.epoch);
      this.sealedPendingBytes.delete(row.epoch);
    }
  }

  recordRejection(rejection: RejectionPayload): boolean {
    if (rejection.site !== this.opts.site || rejection.agent !== this.opts.agent) return false;
    let recorded = false;
    this.commit(() => {
      recorded = recordRejection(this.db, rejection, this.opts.now());
    });
    if (recorded) this.sealedPendingBytes.clear(); // their `since` heads went back to the hub's ack
    return recorded;
  }

  clearRejections(): number {
    return clearRejections(this.db);
  }

  rejections(): AgentRejection[] {
    return readRejections(this.db, this.opts.rejectedRetryMs);
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
      pendingChangeBytes: this.pendingChangeBytes(),
      rejections: this.rejections(),
    });
  }

  close(): void {
    this.db.close();
  }
}

function sameHeads(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((h) => b.includes(h));
}

const packed = new WeakMap<RecordRunInput, StoredDetail>();

/** The input's detail, packed once if it was given as a function (see `RecordRunInput.detail`). */
function storedDetail(input: RecordRunInput): StoredDetail {
  const d = input.detail;
  if (!d) throw new Error('storedDetail called for a run without detail');
  if (typeof d !== 'function') return d;
  let p = packed.get(input);
  if (!p) {
    p = d();
    packed.set(input, p);
  }
  return p;
}
