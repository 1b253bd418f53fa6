/**
 * Ingest benchmark (not a test): N agents each record M plan results per round into a document written
 * exactly as the edge agent writes it (see agentDocs.ts), and send one signed doc-delta per round
 * (`saveSince` the acknowledged heads). The hub verifies, merges, materialises and commits them on a
 * SQLite file. Round 1 is every cell's first run; later rounds find half the plans unchanged (the agent
 * then only confirms the cell) and half changed. As today's agent after the hub's first ack (which says
 * `readsConfirmed`, decision 330), a confirmation is written apart from its cell; `--whole-confirmations`
 * rewrites the whole cell instead, as an agent behind an older hub does.
 *
 *   npx tsx hub/bench/ingest.ts [agents=1000] [cells=200] [--rounds 2] [--batch 100] [--quick]
 *                               [--runs-per-change 10] [--src <dir with Ingest.ts and DocReplicas.ts>]
 *                               [--cache <file> [--generate-only]] [--workers 1] [--whole-confirmations]
 *                               [--wire 2] [--hub-only]
 *
 * `--wire 2`: each round goes as the agent's hop v2 push (issue 46, docs/decisions/500-heartbeat-rebuilds-the-change.md)
 * carried in the relay's batch: after the first round, the unchanged half of the cells is the round's
 * heartbeat, whose change the hub rebuilds by the rule both ends share; the changed half goes as changes.
 * Results count the same (every cell, every round).
 *
 * `--store postgres --url postgres://… --password-file <f>` runs the hub on PostgreSQL (the baselines are
 * skipped), and `--shard i/n` takes only the agents whose index is `i` modulo `n`: n such processes on one
 * database are n hubs (hub/bench/ingestStores.ts runs them).
 *
 * `--workers` is the hub's merge worker threads (`ingest.mergeWorkers`; 0: merge in the hub's thread).
 * `--runs-per-change` is how many results the agent writes as one Automerge change: its RecordBatcher
 * commits results that finish within a few seconds of each other together (decision 007); 1 is an agent
 * whose plans all finish far apart. `--quick` is 100 agents × 20 cells. `--src` measures
 * another version of hub/src/core against the same documents. `--cache` keeps the generated agents'
 * keys and bundles in a file and reuses them when it exists; `--generate-only` stops after writing it.
 * A run from the cache measures the hub in a process that never held the agents' documents, as a real
 * hub: `rssMb`, read right after the hub's rounds (before the baselines), is then the hub's, and a
 * profile sees only the hub. NO_HEADROOM=1 leaves out HeapHeadroom (see hub/src/core/HeapHeadroom.ts), to
 * see what it saves: for the hub it only matters with `--workers 0` (as in app.ts, only a hub merging in
 * its own thread keeps one), and the Automerge baseline loses its own. HUB_ONLY=1 (or `--hub-only`) skips
 * the baselines.
 *
 * Prints one JSON object: results/s through the hub, and in the same run the baselines: Automerge
 * alone doing the hub's part (load each stored document, merge the same bundles, save it) and SQLite
 * inserting the same run rows alone.
 */
import {
  closeSync,
  existsSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import * as A from '@automerge/automerge';
import { encodePush, wire2KeyId } from '@driftline/hop';
import { encodeHeartbeatOf, heartbeatCellKeys, heartbeatChange } from '@driftline/hop/heartbeat';
import {
  type BundleHeader,
  cborDecode,
  cborEncode,
  cryptoRandomBytes,
  decodeBundle,
  decodePayload,
  docId,
  encodeBundle,
  generateSigningKeyPair,
  monotonicUlid,
  publicKeyRaw,
  publicKeyToText,
} from '@driftline/protocol';
import Database from 'better-sqlite3';
import { PgDatabase } from '../src/adapters/postgres/PgDatabase.js';
import { PostgresHubStore } from '../src/adapters/postgres/PostgresHubStore.js';
import { SqliteHubStore } from '../src/adapters/sqlite/SqliteHubStore.js';
import { enrol } from '../src/core/enrolment.js';
import type { HubStore } from '../src/ports/HubStore.js';
import { ulidGen } from '../src/ports/IdGen.js';
import { TestClock } from '../test/agentSim.js';
import { checkAgainstAgent, FastAgentDoc, type RunSpec } from './agentDocs.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    rounds: { type: 'string', default: '2' },
    batch: { type: 'string', default: '100' },
    'runs-per-change': { type: 'string', default: '10' },
    quick: { type: 'boolean', default: false },
    src: { type: 'string' },
    cache: { type: 'string' },
    'generate-only': { type: 'boolean', default: false },
    workers: { type: 'string', default: '1' },
    store: { type: 'string', default: 'sqlite' },
    url: { type: 'string' },
    'password-file': { type: 'string' },
    shard: { type: 'string', default: '0/1' },
    'whole-confirmations': { type: 'boolean', default: false },
    wire: { type: 'string', default: '1' },
    'hub-only': { type: 'boolean', default: false },
  },
});
const [agents, cells] = values.quick
  ? [100, 20]
  : [Number(positionals[0] ?? 1000), Number(positionals[1] ?? 200)];
const rounds = Number(values.rounds);
const batch = Number(values.batch);
const perChange = Number(values['runs-per-change']);
const wholeConfirmations = values['whole-confirmations'] === true;
const wire = Number(values.wire);
if (wire !== 1 && wire !== 2) throw new Error(`--wire is 1 or 2, not ${values.wire}`);
const src = resolve(values.src ?? join(import.meta.dirname, '../src/core'));
const { Ingest } = (await import(join(src, 'Ingest.ts'))) as typeof import('../src/core/Ingest.js');
const { DocReplicas } = (await import(
  join(src, 'DocReplicas.ts')
)) as typeof import('../src/core/DocReplicas.js');

const clock = new TestClock();
const ids = monotonicUlid(() => clock.now(), cryptoRandomBytes);
const cadenceS: Record<string, number> = {};
for (let c = 0; c < cells; c++) cadenceS[`prod/comp-${c}`] = 3600;
/** Per agent: runs recorded since its last push, and when the oldest of them finished. */
const queue = new Map<string, { depth: number; oldest: number | null }>();
/** The facts the agent passes with every run (edge-agent app.ts + SqliteAgentStore.record). */
const factsFor = (who: string) => (at: number) => {
  const q = queue.get(who) ?? { depth: 0, oldest: null };
  queue.set(who, { depth: q.depth + 1, oldest: q.oldest ?? at });
  return {
    version: '0.1.0',
    cadenceS,
    contactIntervalS: 600,
    upstream: 'http://relay.local:8080',
    queueDepth: q.depth + 1,
    oldestUnsentAt: q.oldest ?? at,
    reportedAt: at,
  };
};
checkAgainstAgent(factsFor('check'));
const onPostgres = values.store === 'postgres';
const [shard, shards] = (values.shard ?? '0/1').split('/').map(Number) as [number, number];
/** The agents this process ingests: every one, or its shard's. */
const mine = Array.from({ length: agents }, (_, i) => i).filter((i) => i % shards === shard);

// Agents, their documents and their signed bundles, made before anything is timed.
const tGen = performance.now();
const dir = mkdtempSync(join(tmpdir(), 'hub-bench-'));
/**
 * The signed bundles live in a file, not in memory: the hub's memory is what is measured, and 400,000
 * results' bundles are ~300 MB. `index[round][agent]` is each bundle's offset and length.
 */
type Cache = {
  perChange: number;
  /** 2: hop v2 pushes (absent: a cache written before `--wire`, v1). */
  wire?: number;
  wholeConfirmations?: boolean;
  agents: number;
  cells: number;
  rounds: number;
  keys: string[];
  clock: number;
  index: [number, number][][];
};
const cacheFile = values.cache ?? join(dir, 'bundles');
const metaFile = `${cacheFile}.meta.cbor`;
const cached = existsSync(metaFile) ? (cborDecode(readFileSync(metaFile)) as Cache) : null;
if (
  cached &&
  (cached.agents !== agents ||
    cached.cells !== cells ||
    cached.rounds !== rounds ||
    cached.perChange !== perChange ||
    (cached.wire ?? 1) !== wire)
)
  throw new Error(
    `--cache ${cacheFile} holds ${cached.agents}×${cached.cells}×${cached.rounds}, ${cached.perChange} runs per change, wire ${cached.wire ?? 1}: delete it or match it`,
  );
/** Agent `i`'s site and name. */
const nameOf = (i: number) => ({ site: `site-${i % 100}`, agent: `a${i}` });
/** Agents are enrolled before the first bundle they sign. */
const enrolledAt = clock.now();

/** A generated agent: its document, key and what its hub acked. */
interface Sim {
  site: string;
  agent: string;
  doc: FastAgentDoc;
  key: CryptoKey;
  acked: A.Heads;
  /** Its hop v2 short id (`--wire 2`). */
  from: number;
}

/**
 * Makes the agents' keys, documents and signed bundles; writes the bundles to `cacheFile` and their
 * index, the agents' public keys and the clock to `metaFile`.
 */
async function generate(): Promise<Cache> {
  const sims: Sim[] = [];
  const keys: string[] = [];
  for (let i = 0; i < agents; i++) {
    const { site, agent } = nameOf(i);
    const pair = await generateSigningKeyPair();
    keys.push(await publicKeyToText(pair.publicKey));
    const actor = (i + 1).toString(16).padStart(32, '0');
    const doc = new FastAgentDoc(site, agent, actor, factsFor(agent));
    doc.publishFacts(factsFor(agent)(clock.now()) as Record<string, unknown>, clock.now());
    queue.delete(agent);
    sims.push({
      site,
      agent,
      doc,
      key: pair.privateKey,
      acked: [],
      from: wire2KeyId(await publicKeyRaw(pair.publicKey)),
    });
  }
  const out = openSync(cacheFile, 'w');
  const index: [number, number][][] = [];
  let at = 0;
  for (let r = 0; r < rounds; r++) {
    const list: [number, number][] = [];
    for (const s of sims) {
      /** `--wire 2`: the round's unchanged cells, written as its heartbeat change. */
      const quiet: { key: string; at: number }[] = [];
      for (let c0 = 0; c0 < cells; c0 += perChange) {
        const together: RunSpec[] = [];
        for (let c = c0; c < Math.min(cells, c0 + perChange); c++) {
          clock.advance(1);
          const changed = r === 0 || c % 2 === 1;
          if (wire === 2 && !changed) {
            quiet.push({ key: `prod/comp-${c}`, at: clock.now() });
            continue;
          }
          together.push({
            runId: ids(),
            component: `comp-${c}`,
            environment: 'prod',
            status: c % 7 === 0 ? 'drift' : 'clean',
            planHash: (changed ? r.toString(16) : '0').padStart(64, '0'),
            at: clock.now(),
          });
        }
        s.doc.recordBatch(together);
      }
      if (wire === 2) {
        const bytes = await v2Push(s, quiet, r);
        writeSync(out, bytes);
        list.push([at, bytes.length]);
        at += bytes.length;
        queue.delete(s.agent);
        s.acked = s.doc.h.getHeads();
        continue;
      }
      const heads = s.doc.h.getHeads();
      const header: BundleHeader & { kind: 'doc-delta' } = {
        id: ids() as never,
        kind: 'doc-delta',
        source: { site: s.site, agent: s.agent } as never,
        destination: 'hub',
        created: clock.now(),
        lifetimeS: 30 * 86_400,
        priority: 'status',
        doc: docId(s.site, s.agent, 1),
        heads,
      };
      const changes = s.doc.h.saveSince(s.acked) as Uint8Array<ArrayBuffer>;
      const bytes = await encodeBundle(header, { epoch: 1, changes, blobs: [] }, s.key);
      writeSync(out, bytes);
      list.push([at, bytes.length]);
      at += bytes.length;
      queue.delete(s.agent);
      s.acked = heads;
      // The hub's ack of this push says it reads `confirmed` (the documents have the map).
      s.doc.confirmApart = !wholeConfirmations;
    }
    index.push(list);
  }
  closeSync(out);
  for (const s of sims) s.doc.h.free();
  const meta: Cache = {
    perChange,
    wire,
    wholeConfirmations,
    agents,
    cells,
    rounds,
    keys,
    clock: clock.now(),
    index,
  };
  writeFileSync(metaFile, cborEncode(meta));
  return meta;
}

/**
 * The agent's round as its v2 push: the changes since its last ack and, for `quiet` cells, the heartbeat
 * standing for the change the rule writes (decision 500), which is merged into the agent's document.
 */
async function v2Push(
  s: Sim,
  quiet: readonly { key: string; at: number }[],
  round: number,
): Promise<Uint8Array> {
  const h = s.doc.h;
  const changes = h.saveSince(s.acked);
  const keys = heartbeatCellKeys(h);
  const made = quiet.length > 0 ? heartbeatChange(h, docId(s.site, s.agent, 1), quiet) : null;
  if (quiet.length > 0 && !made) throw new Error(`${s.agent}: no heartbeat change (no confirmed map)`);
  const heartbeat = made ? encodeHeartbeatOf(keys, quiet, made.hash) : null;
  if (made) h.applyChanges([made.bytes]);
  return encodePush(
    { epoch: 1, changes, blobs: [], priority: 'status', ...(heartbeat ? { heartbeat } : {}) },
    { from: s.from, seq: round + 1, t0: clock.now() },
    s.key,
  );
}

const { keys, index, clock: madeAt } = cached ?? (await generate());
clock.advance(madeAt - clock.now()); // from the cache: to where its generation left the clock
if (values['generate-only']) {
  console.error(`[ingest] ${agents}×${cells}×${rounds} bundles written to ${cacheFile}`);
  rmSync(dir, { recursive: true, force: true });
  process.exit(0);
}
const store: HubStore = onPostgres
  ? new PostgresHubStore(
      new PgDatabase({
        url: values.url as string,
        password: values['password-file']
          ? readFileSync(values['password-file'], 'utf8').split('\n')[0]
          : undefined,
      }),
    )
  : new SqliteHubStore(join(dir, 'hub.db'));
for (const i of mine) await enrol(store, { ...nameOf(i), key: keys[i] as string }, enrolledAt);
const bundleFd = openSync(cacheFile, 'r');
/** Bundles `from`..`to` of a round, read from the file. */
const readBundles = (round: number, from: number, to: number): Uint8Array[] =>
  (index[round] ?? []).slice(from, to).map(read);
/** This process's bundles `from`..`to` (of its agents) of a round. */
const readMine = (round: number, from: number, to: number): Uint8Array[] =>
  mine.slice(from, to).map((i) => read((index[round] ?? [])[i] as [number, number]));
function read([offset, length]: [number, number]): Uint8Array {
  const b = new Uint8Array(length);
  readSync(bundleFd, b, 0, length, offset);
  return b;
}
const changesOf = (bytes: Uint8Array): Uint8Array => {
  const b = decodeBundle(bytes);
  const p = b.ok ? decodePayload('doc-delta', b.value.payload) : null;
  if (!p?.ok) throw new Error(`${cacheFile} holds a bundle that does not decode`);
  return p.value.changes;
};
const genS = (performance.now() - tGen) / 1000;

const rate = (ms: number) => Math.round((mine.length * cells) / (ms / 1000));

// The hub: verify + merge + materialise + commit.
const { HeapHeadroom } = (await import(join(src, 'HeapHeadroom.ts')).catch(() => ({}))) as Partial<
  typeof import('../src/core/HeapHeadroom.js')
>;
/** A HeapHeadroom, unless NO_HEADROOM (or the measured version has none). */
const newHeadroom = () => (HeapHeadroom && !process.env.NO_HEADROOM ? new HeapHeadroom() : undefined);
// Merge workers as the hub runs them (`ingest.mergeWorkers`, default 1); 0 merges in this thread.
const workers = Number(values.workers);
// MergePool lives in adapters/threads (older versions: core).
const { MergePool } = (await import(join(src, '../adapters/threads/MergePool.ts'))
  .catch(() => import(join(src, 'MergePool.ts')))
  .catch(() => ({}))) as Partial<typeof import('../src/adapters/threads/MergePool.js')>;
const merger = workers > 0 && MergePool ? new MergePool(workers) : undefined;
// As the hub (app.ts): heap headroom only when it merges in its own thread.
const headroom = merger ? undefined : newHeadroom();
// On PostgreSQL other hubs may share the store (as app.ts: the memo is not relied on).
const replicas = new DocReplicas(store, { ...(merger ? { merger } : { headroom }), shared: onPostgres });
const ingest = new Ingest({
  store,
  clock,
  ids: ulidGen(clock),
  replicas,
  hubPrivateKey: (await generateSigningKeyPair()).privateKey,
  webhookUrls: [],
  log: { warn: () => {} },
  count: { refused: () => {}, merged: () => {} },
});
const hubRounds: { round: number; ms: number; resultsPerSec: number }[] = [];
let hubMs = 0;
/**
 * CPU time (ms, every thread of the process: the merge worker's too) spent in the same spans as the
 * wall times: on a shared machine the ratio of CPU times is the steadier one (decision 350).
 */
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
let hubCpuMs = 0;
const startedAt = Date.now();
for (let r = 0; r < rounds; r++) {
  let ms = 0;
  for (let i = 0; i < mine.length; i += batch) {
    const bundles = readMine(r, i, i + batch); // read from the file before timing: not the hub's work
    const t0 = performance.now();
    const c0 = cpuMs();
    const receipts = await ingest.accept('bench', bundles);
    ms += performance.now() - t0;
    hubCpuMs += cpuMs() - c0;
    const bad = receipts.find((x) => x.status !== 'stored');
    if (bad) throw new Error(`refused: ${JSON.stringify(bad)}`);
  }
  hubMs += ms;
  hubRounds.push({ round: r + 1, ms: Math.round(ms), resultsPerSec: rate(ms) });
}
const endedAt = Date.now();
const rssMb = Math.round(process.memoryUsage().rss / 1048576);
const runRows = (await store.listCells()).length;
/** On PostgreSQL only the hub is measured (the baselines are SQLite's run's); on v2 too (they read v1 bundles). */
const baselines = !process.env.HUB_ONLY && !values['hub-only'] && !onPostgres && wire === 1;
const { memos } = replicas.size();
const heapMb = headroom ? Math.round(headroom.size() / 1048576) : null;
await merger?.close();
await store.close();

// Baseline 1: Automerge alone doing what the hub asks of it per agent and round, same order: load the
// stored document (a `save()`), merge the bundle's changes, save it again, free it. Holding 1,000
// merged replicas instead does not fit in wasm32's 4 GiB heap at 200 cells (decision 009).
const saved = new Map<number, Uint8Array>();
// With a heap headroom, as the hub has when it merges in its own thread: without one Automerge alone
// spends most of its time in GC.
const baseRoom = newHeadroom();
let automergeMs = 0;
let automergeCpuMs = 0;
for (let r = 0; r < (baselines ? rounds : 0); r++) {
  // Read and decoded before timing: the baseline is Automerge merging, nothing else.
  const list = readBundles(r, 0, agents).map(changesOf);
  const t0 = performance.now();
  const c0 = cpuMs();
  for (let i = 0; i < agents; i++) {
    const h = A.getBackend(A.init());
    const before = saved.get(i);
    if (before) h.loadIncremental(before);
    h.loadIncremental(list[i] as Uint8Array);
    saved.set(i, h.save());
    h.free();
    if (i % batch === batch - 1) baseRoom?.check();
  }
  automergeMs += performance.now() - t0;
  automergeCpuMs += cpuMs() - c0;
}
saved.clear();
closeSync(bundleFd);

// Baseline 2: SQLite alone inserting as many run rows of the same shape, one transaction per batch.
const db = new Database(join(dir, 'floor.db'));
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.exec('CREATE TABLE runs (run_id TEXT PRIMARY KEY, site TEXT, environment TEXT, component TEXT, row TEXT)');
const ins = db.prepare('INSERT OR IGNORE INTO runs VALUES (?, ?, ?, ?, ?)');
const row = JSON.stringify({ summary: { status: 'clean', counts: { add: 0 } }, pad: 'x'.repeat(400) });
const insertBatch = db.transaction((from: number, n: number) => {
  for (let k = from; k < from + n; k++) ins.run(`run-${k}`, 'site', 'prod', `comp-${k % cells}`, row);
});
const tSql = performance.now();
const total = baselines ? agents * cells * rounds : 0;
for (let k = 0; k < total; k += batch * cells) insertBatch(k, Math.min(batch * cells, total - k));
const sqliteMs = performance.now() - tSql;
db.close();
rmSync(dir, { recursive: true, force: true });

const results = mine.length * cells * rounds;
console.log(
  JSON.stringify({
    bench: 'hub-ingest',
    store: onPostgres ? 'postgres' : 'sqlite',
    shard: `${shard}/${shards}`,
    startedAt,
    endedAt,
    agents,
    cells,
    rounds,
    batch,
    runsPerChange: perChange,
    wholeConfirmations,
    wire,
    mergeWorkers: merger ? workers : 0,
    results,
    resultsPerSec: Math.round(results / (hubMs / 1000)),
    rssMb,
    perRound: hubRounds,
    reserves: headroom ? headroom.reserves : null,
    memos,
    automergeHeapMb: heapMb,
    cellsMaterialised: runRows,
    baseline: baselines
      ? {
          automergeMergeOnlyPerSec: Math.round(results / (automergeMs / 1000)),
          sqliteInsertOnlyPerSec: Math.round(results / (sqliteMs / 1000)),
          hubVsAutomerge: +(automergeMs / hubMs).toFixed(2),
          hubVsAutomergeCpu: +(automergeCpuMs / hubCpuMs).toFixed(2),
          hubCpuS: +(hubCpuMs / 1000).toFixed(1),
          automergeCpuS: +(automergeCpuMs / 1000).toFixed(1),
        }
      : null,
    bundleMb: +(index.flat().reduce((n, [, len]) => n + len, 0) / 1048576).toFixed(1),
    generateS: +genS.toFixed(1),
    loadavg: loadavg().map((x) => +x.toFixed(2)),
  }),
);
