/**
 * loss: results produced while both links reset connections at random (about 30 % of connections),
 * and the sender duplicates and reorders what it sends (30 % each). Driftline: the real agent store,
 * SyncEngine and HttpUplink through the real relay to the real hub. Baseline: Automerge's sync protocol
 * through a middle replica over links with the same settings. Time to converge after the last result,
 * results lost (not at the hub by the deadline) and duplicated (materialised more than once).
 */
import { createHash } from 'node:crypto';
import * as A from '@automerge/automerge';
import type { Uplink } from '@driftline/edge-agent';
import { generateSigningKeyPair, type Sha256 } from '@driftline/protocol';
import { startLink } from '@driftline/simulation';
import {
  agentStore,
  emit,
  httpUplink,
  isQuick,
  log,
  newRunId,
  recordPlan,
  sleep,
  syncEngine,
  until,
} from '../lib/agent.js';
import { SyncNode } from '../lib/amSync.js';
import { realPlan, rng } from '../lib/plans.js';
import { startChain } from '../lib/topology.js';

const RESULTS = isQuick ? 60 : 300;
const DEADLINE = isQuick ? 60_000 : 180_000;
const random = rng(9);
const link = { uplink: { delayMs: 50 }, downlink: { delayMs: 50 }, resetsPerMin: 10 };
const chaos = { duplicate: 0.3, reorder: 0.3, random };

/** Duplicates and reorders batches at the sender: a copy now, an old batch again after a newer one. */
function chaotic(inner: Uplink): Uplink {
  const sent: Uint8Array[] = [];
  return {
    url: inner.url,
    probe: () => inner.probe(),
    pullDownlink: (s, a) => inner.pullDownlink(s, a),
    uploadBlob: (b, p, s) => inner.uploadBlob(b, p, s),
    async postBundles(batch) {
      const r = await inner.postBundles(batch);
      if (random() < chaos.duplicate) await inner.postBundles(batch);
      if (sent.length > 0 && random() < chaos.reorder)
        await inner.postBundles(sent[Math.floor(random() * sent.length)]!);
      sent.push(batch);
      return r;
    },
  };
}

const keys = await generateSigningKeyPair();
const chain = await startChain(keys.publicKey, link, { backoffBaseMs: 100, backoffMaxMs: 1000 });
const store = agentStore(Date.now, { maxDocBytes: 64 * 1024 * 1024 });
const engine = syncEngine(
  store,
  [chaotic(httpUplink(store, chain.relayUrl, chain.agentToken))],
  keys,
  chain.hubPublicKey,
);
const docNow = () => store.loadEpoch(store.status().epoch);
const hubNode = new SyncNode(A.clone(docNow()), chaos);
const midNode = new SyncNode(A.clone(docNow()), chaos);
const agentNode = new SyncNode(A.clone(docNow()), chaos);
const amHubLink = await startLink({
  name: 'am-mid-hub',
  target: { port: await hubNode.listen() },
  settings: link,
  seed: 3,
});
const amAgentLink = await startLink({
  name: 'am-agent-mid',
  target: { port: await midNode.listen() },
  settings: link,
  seed: 4,
});
midNode.dial(amHubLink.port, 50);
agentNode.dial(amAgentLink.port, 50);

let pushing = true;
const pushLoop = (async () => {
  while (pushing) {
    await engine.pushOnce().catch(() => undefined);
    await sleep(200);
  }
})();

const ids = newRunId();
const base = Array.from({ length: 10 }, (_, i) => realPlan(`component-${i}`, 'changes', 1, Date.now(), i));
const runIds: string[] = [];
for (let i = 0; i < RESULTS; i++) {
  const p = base[i % base.length]!;
  const planHash = createHash('sha256').update(`${i}`).digest('hex') as Sha256;
  const runId = ids();
  runIds.push(runId);
  recordPlan(
    store,
    runId,
    { ...p, summary: { ...p.summary, planHash, finishedAt: new Date().toISOString() } },
    {},
  );
  agentNode.update(A.merge(agentNode.doc, docNow()));
  await sleep(50);
}
const tLast = performance.now();
const dlAll = () => runIds.every((id) => chain.committed.has(id));
const amAll = () => runIds.every((id) => hubNode.doc.runs?.[id] !== undefined);
let dlMs: number | null = null;
let amMs: number | null = null;
await Promise.all([
  until(dlAll, DEADLINE, 20).then((ok) => {
    if (ok) dlMs = Math.round(performance.now() - tLast);
  }),
  until(amAll, DEADLINE, 20).then((ok) => {
    if (ok) amMs = Math.round(performance.now() - tLast);
  }),
]);
pushing = false;
await pushLoop;
const dlLost = runIds.filter((id) => !chain.committed.has(id)).length;
const dlDup = runIds.reduce((n, id) => n + Math.max(0, (chain.committed.get(id)?.times ?? 1) - 1), 0);
const amLost = runIds.filter((id) => hubNode.doc.runs?.[id] === undefined).length;
const frac = (l: { stats(): { connections: { total: number; resets: number } } }) => {
  const c = l.stats().connections;
  return `${c.resets}/${c.total}`;
};
log('loss', 'links', {
  driftlineResets: chain.links.map(frac),
  automergeResets: [amAgentLink, amHubLink].map(frac),
  amErrors: [...agentNode.errors, ...midNode.errors, ...hubNode.errors].slice(0, 3),
  amMessages: agentNode.messagesSent + midNode.messagesSent + hubNode.messagesSent,
});
emit({
  driftline: { convergedMs: dlMs, lost: dlLost, duplicated: dlDup },
  // An Automerge document holds a run once by construction: a duplicate cannot be materialised twice.
  automergeSync: { convergedMs: amMs, lost: amLost, duplicated: 0 },
});
for (const n of [agentNode, midNode, hubNode]) n.close();
await amAgentLink.close();
await amHubLink.close();
store.close();
await chain.close().catch(() => undefined);
process.exit(0);
