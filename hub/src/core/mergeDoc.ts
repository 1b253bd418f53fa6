import { createHash } from 'node:crypto';
import * as A from '@automerge/automerge';
import { heartbeatActor, heartbeatHeld, rebuildHeartbeat } from '@driftline/hop/heartbeat';
import { automergeChunks, type ChunkBreak, concatBytes, type wire2 } from '@driftline/protocol';
import { type Backend, DocReader, type Touched } from './DocReader.js';

/**
 * Automerge's whole part of ingesting one document's bundles, as a function of plain data: load the
 * stored chunks, merge each bundle's changes, read what changed, decide how to store the result. It
 * runs in a merge worker (adapters/threads/MergePool) or, with no workers, in the hub's thread; the caller does the
 * rest (store lookups, materialising, commit) from the returned data.
 */
export interface MergeInput {
  docId: string;
  site: string;
  agent: string;
  /** The document's stored chunks, in order (HubStore.docChunks). */
  stored: Uint8Array[];
  /** Each accepted bundle's changes, in the order they are merged. */
  changes: Uint8Array[];
  /**
   * A v2 push's heartbeat per bundle (absent: none), the change rebuilt after that bundle's changes
   * (docs/decisions/500-heartbeat-rebuilds-the-change.md).
   */
  heartbeats?: (wire2.HeartbeatBody | null)[];
  /** A bundle is a v2 push: its ack says whether the hub rebuilds heartbeats (`writesHeartbeats`). */
  wire2?: boolean;
  /** Whether the caller holds the declared cadences as last read (DocReplicas' memo): not read again unless changed. */
  cadenceKnown: boolean;
  /** When to store the whole document instead of appending chunks (see `storeWhole`). */
  maxChunks: number;
  maxGrowth: number;
}

export type MergedItem =
  /**
   * `changed`: the chunk changed the document or waits for dependencies, so it is stored. `rebuilt`: the
   * change its heartbeat stands for, stored after its changes.
   */
  | { ok: true; changed: boolean; rebuilt?: Uint8Array }
  /** The document says it belongs to another agent: refused, and the replica goes back to before it. */
  | { ok: false; reason: 'agent-mismatch'; docSite: unknown; docAgent: unknown }
  /** The changes are not Automerge changes: refused. */
  | { ok: false; reason: 'bad-changes'; message: string };

/**
 * What changed over a stretch of merged bundles, with the changed entries: read them through
 * `SegmentEntries` (packed entries are parsed there, in the hub's thread, and cells get their
 * confirmed entry applied).
 */
export interface Segment {
  touched: Touched;
  /** Entries not packed as a string (older agents' maps, the first packed form), as plain data. */
  runs: Record<string, unknown>;
  cells: Record<string, unknown>;
  /** Packed entries as their JSON text, not parsed (`DocReader.packedText`); Maps: keys are the agent's. */
  packed: { runs: Map<string, string>; cells: Map<string, string> };
  /** The `confirmed` entry of each packed cell that has one (decision 330), applied when it is read. */
  confirmed: Map<string, unknown>;
  /** Every cell key (only when the cadences changed: every cell's expected interval may move). */
  cellKeys: string[] | null;
  /** The facts; without `cadenceS` when `cadenceFromMemo` (unchanged, and the caller holds them). */
  facts: unknown;
  cadenceFromMemo: boolean;
}

export interface MergeOutput {
  items: MergedItem[];
  /**
   * One per refused bundle (what the bundles before it changed), then one for the end; `null` where
   * nothing changed. Segment k is read before refused item k's receipt.
   */
  segments: (Segment | null)[];
  heads: string[];
  /** The document's `bundles` map (publication delivery states), when a segment changed it. */
  publications: unknown;
  /** The document's `applies` map (apply records), when a segment changed it. */
  applies: unknown;
  /** The document's `requests` map (plan requests the agent received), when a segment changed it. */
  requests?: unknown;
  /** The whole document to store in place of its chunks, or null: store the changed items' chunks. */
  whole: Uint8Array | null;
  /**
   * The document has a `confirmed` map (decision 330): its agent writes unchanged re-plans there once an
   * ack says the hub reads them (`AckPayload.readsConfirmed`).
   */
  readsConfirmed?: boolean;
  /** The agent writes its quiet rounds as heartbeat changes (decision 500): its v2 ack says the hub rebuilds them. */
  writesHeartbeats?: boolean;
  /**
   * The document holds changes it cannot apply yet: they depend on changes the hub never received (a push
   * an upstream took custody of and lost, so the next carried only what came after). Stored, they apply
   * once those arrive; until then `heads` is what the hub holds, not what the bundles carried.
   */
  waitsForDeps?: boolean;
}

export function mergeDoc(input: MergeInput): MergeOutput {
  const stored = input.stored.reduce((n, c) => n + c.length, 0);
  const base = input.stored[0]?.length ?? 0;
  // With heartbeats to rebuild, the replica is loaded as the document's heartbeat actor: each is made in
  // place, not on a copy of the document (decision 500)
  const actor = input.heartbeats?.some((x) => x) ? heartbeatActor(input.docId) : undefined;
  let h = loadStored(input.stored, actor);
  // Automerge logs the patches of what is merged from here on: reading them (`diffIncremental`) costs
  // about half of `diff(before, after)` for the same patches (docs/decisions/350-hub-ingest-throughput.md).
  h.updateDiffCursor();
  const accepted: Uint8Array[] = [];
  try {
    let from = h.getHeads();
    /** Where the patch log starts: a segment read from there to the current heads takes its patches. */
    let cursor = from;
    const items: MergedItem[] = [];
    const segments: (Segment | null)[] = [];
    let publicationsTouched = false;
    let appliesTouched = false;
    let requestsTouched = false;
    const read = (to: A.Heads, at?: A.Heads): Segment | null => {
      if (sameHeads(from, to)) return null;
      const since = from;
      from = to;
      const doc = new DocReader(h, at);
      const logged = at === undefined && sameHeads(cursor, since);
      const touched = doc.touched(since, to, logged ? h.diffIncremental() : undefined);
      if (logged) cursor = to;
      publicationsTouched ||= touched.publications;
      appliesTouched ||= touched.applies;
      requestsTouched ||= touched.requests;
      const cellKeys = touched.cadence ? doc.keys('cells') : null;
      // Cells the merge did not touch are read too when the cadences changed: all at once.
      if (cellKeys?.some((k) => !touched.cells.has(k))) doc.preload('cells');
      const runs: Record<string, unknown> = {};
      const cells: Record<string, unknown> = {};
      const packed: Segment['packed'] = { runs: new Map(), cells: new Map() };
      const confirmed = new Map<string, unknown>();
      for (const k of touched.runs) {
        const text = doc.packedText('runs', k);
        if (text === undefined) runs[k] = doc.entry('runs', k);
        else packed.runs.set(k, text);
      }
      for (const k of cellKeys ?? touched.cells) {
        const text = doc.packedText('cells', k);
        if (text === undefined) {
          cells[k] = doc.entry('cells', k);
          continue;
        }
        packed.cells.set(k, text);
        const c = doc.confirmedEntry(k);
        if (c !== undefined) confirmed.set(k, c);
      }
      const omit = input.cadenceKnown && !touched.cadence;
      const facts = doc.facts(omit);
      const cadenceFromMemo = omit && facts !== undefined;
      return { touched, runs, cells, packed, confirmed, cellKeys, facts, cadenceFromMemo };
    };
    /** Back to the stored state plus the chunks accepted so far (after a refused bundle). */
    const restart = () => {
      h.free();
      h = loadStored(input.stored, actor);
      for (const c of accepted) h.loadIncremental(c);
      h.updateDiffCursor();
      from = h.getHeads();
      cursor = from;
    };

    let rebuiltAny = false;
    for (const [n, changes] of input.changes.entries()) {
      const heartbeat = input.heartbeats?.[n] ?? null;
      // A bundle that only announces detail blobs (again: docs/decisions/412-every-held-blob-receipted.md)
      // carries no changes: nothing to merge, and its announcements are taken.
      if (changes.length === 0 && !heartbeat) {
        items.push({ ok: true, changed: false });
        continue;
      }
      const before = h.getHeads();
      const waiting = h.getMissingDeps([]).join();
      // Automerge skips bytes it cannot parse when merging into a non-empty document, but would fail
      // to load them again from the store: malformed chunks are refused before they are merged.
      const shape = changes.length === 0 ? null : chunkShapeError(changes);
      let error: string | null = shape;
      let rebuilt: Uint8Array | undefined;
      if (!shape) {
        try {
          if (changes.length > 0) h.loadIncremental(changes);
          // (a round sent again whose change is here already: nothing to rebuild, a duplicate)
          if (heartbeat && !heartbeatHeld(h, heartbeat)) {
            // the change the heartbeat stands for, made on the document as the push's changes left it
            const r = rebuildHeartbeat(h, input.docId, heartbeat, true);
            if (r.ok) rebuilt = r.bytes;
            else {
              error = r.reason;
            }
          }
        } catch (e) {
          error = e instanceof Error ? e.message : String(e);
        }
      }
      if (error !== null) {
        segments.push(read(before, before));
        if (!shape) restart(); // the load may have left part of the chunk merged
        items.push({ ok: false, reason: 'bad-changes', message: error });
        continue;
      }
      const root = new DocReader(h);
      const docSite = root.root('site');
      const docAgent = root.root('agent');
      if (
        (docSite !== undefined && docSite !== input.site) ||
        (docAgent !== undefined && docAgent !== input.agent)
      ) {
        // What came before this bundle is good: read it as it was, then start over without it.
        segments.push(read(before, before));
        restart();
        items.push({ ok: false, reason: 'agent-mismatch', docSite, docAgent });
        continue;
      }
      const changed = !sameHeads(before, h.getHeads()) || h.getMissingDeps([]).join() !== waiting;
      if (changed) accepted.push(rebuilt ? concatBytes(changes, rebuilt) : changes);
      if (rebuilt) rebuiltAny = true;
      items.push({ ok: true, changed, ...(rebuilt ? { rebuilt } : {}) });
    }
    segments.push(read(h.getHeads()));
    const added = accepted.reduce((n, c) => n + c.length, 0);
    const waitsForDeps = h.getMissingDeps([]).length > 0;
    const whole =
      accepted.length > 0 &&
      !waitsForDeps &&
      (input.stored.length + accepted.length > input.maxChunks ||
        stored - base + added > base * input.maxGrowth);
    return {
      items,
      segments,
      heads: h.getHeads(),
      publications: publicationsTouched ? new DocReader(h).root('bundles') : undefined,
      applies: appliesTouched ? new DocReader(h).root('applies') : undefined,
      requests: requestsTouched ? new DocReader(h).root('requests') : undefined,
      whole: whole ? h.save() : null,
      readsConfirmed: new DocReader(h).hasConfirmed(),
      // read only for a v2 push's ack: not on every merge
      writesHeartbeats: rebuiltAny || (input.wire2 === true && writesHeartbeats(h, input.docId)),
      ...(waitsForDeps ? { waitsForDeps: true } : {}),
    };
  } finally {
    h.free();
  }
}

/**
 * A replica of the stored chunks, loaded in one call. Should that fail (a chunk stored by an older hub
 * that did not check them), chunk by chunk, skipping what Automerge cannot parse: a document must
 * never become unloadable.
 */
export function loadStored(chunks: readonly Uint8Array[], actor?: string): Backend {
  const init = () => A.getBackend(A.init(actor === undefined ? undefined : { actor }));
  const h = init();
  if (chunks.length === 0) return h;
  try {
    h.loadIncremental(concatBytes(...chunks));
    return h;
  } catch {
    h.free();
  }
  const each = init();
  for (const c of chunks) {
    try {
      each.loadIncremental(c);
    } catch {
      // skipped: its changes are lost to this replica until the agent sends them again
    }
  }
  return each;
}

/**
 * Whether the agent writes its quiet rounds as heartbeat changes (decision 500): a `confirmed` entry (of the
 * first few) was last written by the document's heartbeat actor. Only such an agent is told, in its v2 ack,
 * that this hub rebuilds them: an agent older than decision 500 never sees the ack's `heartbeats` field.
 */
function writesHeartbeats(h: Backend, docId: string): boolean {
  const confirmed = h.get('_root', 'confirmed');
  if (typeof confirmed !== 'string') return false;
  const actor = heartbeatActor(docId);
  for (const key of h.keys(confirmed).slice(0, 8)) {
    const all = h.getAll(confirmed, key) as unknown as [string, unknown, string][];
    if (all.some((v) => typeof v[2] === 'string' && v[2].endsWith(`@${actor}`))) return true;
  }
  return false;
}

/**
 * Why `bytes` is not a sequence of whole, intact Automerge chunks (protocol's `automergeChunks`), or null.
 * The checksum is the first 4 bytes of the SHA-256 of type, length and data; Automerge itself skips a bad
 * chunk when merging into a loaded document.
 */
export function chunkShapeError(bytes: Uint8Array): string | null {
  if (bytes.length === 0) return 'no changes';
  const { chunks, broken } = automergeChunks(bytes);
  for (const { start, end } of chunks) {
    const sum = createHash('sha256')
      .update(bytes.subarray(start + 8, end))
      .digest();
    if (sum.compare(bytes, start + 4, start + 8, 0, 4) !== 0)
      return `chunk at byte ${start} fails its checksum`;
  }
  return broken ? BROKEN[broken.why](broken.at) : null;
}

const BROKEN: Record<ChunkBreak['why'], (at: number) => string> = {
  magic: (at) => `no Automerge chunk at byte ${at}`,
  length: (at) => `chunk at byte ${at} has a bad length`,
  short: (at) => `chunk at byte ${at} is cut short`,
};

const sameHeads = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && a.every((x, i) => x === b[i]);
