/**
 * wireBytes: one re-plan cycle of 200 components (mostly unchanged, some changed, a few drifted),
 * recorded by the agent's real store and pushed by its real SyncEngine + HttpUplink to a byte-counting
 * endpoint. Compared with Automerge `saveSince` of the same changes, an Olympus-style POST of every full
 * plan JSON, and brotli of the JSON delta of the facts (the floor).
 *
 * The cycle is recorded as the daemon records a cron round whose plans each take longer than its
 * 5-second record window, two at a time: through its `RecordBatcher`, one result per commit, each told
 * whether more are coming (docs/decisions/370-one-change-per-push.md). `--one-change-per-plan`: each plan
 * recorded alone (`record()`), as this part did before decision 370.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { brotliCompressSync, brotliDecompressSync } from 'node:zlib';
import { RecordBatcher } from '@driftline/edge-agent';
import { decodeBatch, decodeBundle, generateSigningKeyPair } from '@driftline/protocol';
import {
  agentStore,
  emit,
  httpUplink,
  log,
  newRunId,
  planInput,
  recordPlan,
  syncEngine,
} from '../lib/agent.js';
import { cycleStates, realPlan } from '../lib/plans.js';

const CELLS = 200;
const bodies: number[] = [];
const server = createServer((req, res) => {
  const parts: Buffer[] = [];
  req.on('data', (c: Buffer) => parts.push(c));
  req.on('end', () => {
    if (req.method === 'GET') {
      res.end('{"status":"ok"}');
      return;
    }
    const body = Buffer.concat(parts);
    bodies.push(body.length);
    const batch = decodeBatch(new Uint8Array(brotliDecompressSync(body)));
    if (!batch.ok) throw new Error(batch.error.message);
    const receipts = batch.value.map((b, index) => {
      const d = decodeBundle(b);
      return { bundleId: d.ok ? d.value.header.id : null, index, status: 'stored', by: 'bench' };
    });
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ receipts }));
  });
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

let now = Date.parse('2026-06-01T00:00:00Z');
const clock = () => now;
const store = agentStore(clock);
const keys = await generateSigningKeyPair();
const engine = syncEngine(store, [httpUplink(store, url, 't')], keys, keys.publicKey, clock);
const ids = newRunId(clock);
const comps = Array.from({ length: CELLS }, (_, i) => `component-${String(i).padStart(3, '0')}`);
const cadenceS = Object.fromEntries(comps.map((c) => [`prod/${c}`, 900]));
const [first, second] = cycleStates(CELLS, 2) as [
  ReturnType<typeof cycleStates>[number],
  ReturnType<typeof cycleStates>[number],
];

// Cycle 1: the estate as the hub already holds it (pushed and receipted).
for (const [i, c] of comps.entries()) {
  now += 1000;
  recordPlan(store, ids(), realPlan(c, first[i]!.state, first[i]!.variant, now, i % 10), cadenceS);
}
const firstDelta = store.pending()[0];
const p1 = await engine.pushOnce();
if (p1.kind !== 'pushed' || !firstDelta) throw new Error(`first push: ${JSON.stringify(p1)}`);
// The hub's ack of it, as a hub since decision 330 sends it: it reads confirmations written apart from
// their cells, so the agent writes the unchanged plans of cycle 2 so. `--whole-confirmations`: as an
// older hub, whose ack does not say so (each confirmation rewrites its cell).
const wholeConfirmations = process.argv.includes('--whole-confirmations');
store.applyAck({
  agent: 'a1' as never,
  doc: firstDelta.docId,
  heads: firstDelta.heads,
  blobs: [],
  committedAt: now,
  ...(wholeConfirmations ? {} : { readsConfirmed: true as const }),
});
bodies.length = 0;

// Cycle 2, 15 minutes later: the cycle measured.
now += 15 * 60_000;
let unchanged = 0;
let fullPlanPost = 0;
let blobBytes = 0;
const facts: object[] = [];
const onePerPlan = process.argv.includes('--one-change-per-plan');
// `--batched`: the whole cycle in one commit (results that all finish within one record window).
const batched = process.argv.includes('--batched');
let left = CELLS;
const batcher = new RecordBatcher({
  recordMany: (inputs, opts) => store.recordMany(inputs, opts),
  setTimer: () => () => {},
  windowMs: 5000,
  maxBatch: batched ? CELLS : 1,
  moreComing: () => left > 0,
});
const recorded: Promise<{ unchanged: boolean }>[] = [];
for (const [i, c] of comps.entries()) {
  now += 1000;
  const p = realPlan(c, second[i]!.state, second[i]!.variant, now, i % 10);
  fullPlanPost += Buffer.byteLength(p.json);
  left--;
  const r = onePerPlan
    ? Promise.resolve(recordPlan(store, ids(), p, cadenceS))
    : batcher.record(planInput(ids(), p, cadenceS));
  recorded.push(r);
  const { resources: _r, ...s } = p.summary;
  facts.push({ c, at: now, s });
}
for (const [i, r] of (await Promise.all(recorded)).entries())
  if (r.unchanged) {
    unchanged++;
    facts[i] = { c: comps[i], at: (facts[i] as { at: number }).at };
  }
for (const b of store.blobsToUpload(1000)) blobBytes += b.size;
const pending = store.pending();
const automergeSaveSince = pending.reduce((n, d) => n + d.changes.length, 0);
const p2 = await engine.pushOnce();
if (p2.kind !== 'pushed') throw new Error(`second push: ${JSON.stringify(p2)}`);
const driftline = bodies.reduce((a, b) => a + b, 0);
const brotliJsonDelta = brotliCompressSync(JSON.stringify(facts)).length;
log('wireBytes', 'cycle', {
  unchanged,
  changedOrDrift: CELLS - unchanged,
  detailBlobBytesByTus: blobBytes,
  ratioToSaveSince: +(driftline / automergeSaveSince).toFixed(3),
  saveSinceBrotli: pending.reduce((n, d) => n + brotliCompressSync(d.changes).length, 0),
  fullPlanPostOverDriftline: +(fullPlanPost / driftline).toFixed(1),
});
emit({
  cells: CELLS,
  driftline,
  automergeSaveSince,
  fullPlanPost,
  brotliJsonDelta,
  // Issue 33's goal: at most 3 × the floor.
  vsFloor: +(driftline / brotliJsonDelta).toFixed(2),
  pass: { within3xFloor: driftline <= 3 * brotliJsonDelta },
  wholeConfirmations,
  onePerPlan,
  batched,
});
store.close();
server.close();
