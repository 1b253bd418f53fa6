/**
 * Ingest benchmark (not a test): N agents × M cells, each agent sending one signed doc-delta
 * carrying M plan results, through verify + merge + materialise + commit on a SQLite file.
 *   npx tsx hub/bench/ingest.ts [agents=1000] [cells=10] [batch=100]
 * Prints one JSON object: results/s, bundles/s, RSS.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateSigningKeyPair } from '@driftline/protocol';
import { SqliteHubStore } from '../src/adapters/sqlite/SqliteHubStore.js';
import { DocReplicas } from '../src/core/DocReplicas.js';
import { enrol } from '../src/core/enrolment.js';
import { Ingest } from '../src/core/Ingest.js';
import { ulidGen } from '../src/ports/IdGen.js';
import { AgentSim, TestClock } from '../test/agentSim.js';

const [agents = 1000, cells = 10, batch = 100] = process.argv.slice(2).map(Number);
const dir = mkdtempSync(join(tmpdir(), 'hub-bench-'));
const store = new SqliteHubStore(join(dir, 'hub.db'));
const clock = new TestClock();
const ingest = new Ingest({
  store,
  clock,
  ids: ulidGen(clock),
  replicas: new DocReplicas(store),
  hubPrivateKey: (await generateSigningKeyPair()).privateKey,
  webhookUrls: [],
  log: { warn: () => {} },
  count: { refused: () => {}, merged: () => {} },
});

const rounds = 2;
const bundles: Uint8Array[][] = [[], []];
const sims: AgentSim[] = [];
for (let i = 0; i < agents; i++) {
  const a = await AgentSim.create('site-' + (i % 100), `a${i}`, clock);
  await enrol(store, { site: a.site, agent: a.agent, key: await a.publicKeyText() }, clock.now());
  sims.push(a);
}
for (let r = 0; r < rounds; r++) {
  for (const a of sims) {
    for (let c = 0; c < cells; c++)
      a.plan('prod', `comp-${c}`, c % 7 === 0 ? 'drift' : 'clean', { cadenceS: 3600 });
    const { getHeads } = await import('@automerge/automerge');
    const heads = getHeads(a.doc);
    bundles[r]!.push(await a.delta());
    a.acked = heads;
  }
}

const results: { round: number; resultsPerS: number; bundlesPerS: number; ms: number }[] = [];
for (let r = 0; r < rounds; r++) {
  const list = bundles[r]!;
  const t0 = performance.now();
  for (let i = 0; i < list.length; i += batch) {
    const receipts = await ingest.accept('bench', list.slice(i, i + batch));
    if (receipts.some((x) => x.status !== 'stored'))
      throw new Error(`refused: ${JSON.stringify(receipts.find((x) => x.status !== 'stored'))}`);
  }
  const ms = performance.now() - t0;
  results.push({
    round: r + 1,
    ms: Math.round(ms),
    resultsPerS: Math.round((agents * cells) / (ms / 1000)),
    bundlesPerS: Math.round(agents / (ms / 1000)),
  });
}
console.log(
  JSON.stringify({
    bench: 'hub-ingest',
    agents,
    cellsPerAgent: cells,
    batch,
    rounds: results,
    rssMB: Math.round(process.memoryUsage().rss / 1048576),
    heapMB: Math.round(process.memoryUsage().heapUsed / 1048576),
  }),
);
await store.close();
rmSync(dir, { recursive: true, force: true });
