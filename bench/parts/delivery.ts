/**
 * delivery: a result recorded at the agent while the links are down, until it is committed at the hub,
 * agent → relay → hub over two emulated links with a one-way delay of ≥ 2 s each, timed from the moment
 * the links come up. Baseline: the same document synced by Automerge's sync protocol through a middle
 * replica over two links with the same settings, in the same run.
 */
import * as A from '@automerge/automerge';
import { generateSigningKeyPair } from '@driftline/protocol';
import { startLink } from '@driftline/simulation';
import {
  agentStore,
  emit,
  httpUplink,
  isQuick,
  log,
  newRunId,
  recordPlan,
  syncEngine,
  until,
} from '../lib/agent.js';
import { SyncNode } from '../lib/amSync.js';
import { realPlan } from '../lib/plans.js';
import { startChain } from '../lib/topology.js';

const DELAY = 2000;
const SAMPLES = isQuick ? 1 : 3;
const PRIOR = 20;
const keys = await generateSigningKeyPair();
const chain = await startChain(keys.publicKey, {});
const store = agentStore();
const engine = syncEngine(
  store,
  [httpUplink(store, chain.relayUrl, chain.agentToken)],
  keys,
  chain.hubPublicKey,
);
const ids = newRunId();
const cadenceS: Record<string, number> = {};
const comps = Array.from({ length: PRIOR }, (_, i) => `component-${String(i).padStart(3, '0')}`);
for (const c of comps) cadenceS[`prod/${c}`] = 900;
const prior: string[] = [];
for (const [i, c] of comps.entries()) {
  const id = ids();
  prior.push(id);
  recordPlan(store, id, realPlan(c, 'clean', 0, Date.now(), i % 5), cadenceS);
}
// Warm-up over undelayed links: the hub holds the estate before the measured result.
await engine.pushOnce();
if (!(await until(() => prior.every((id) => chain.committed.has(id)), 30_000)))
  throw new Error('warm-up results did not reach the hub');

// The baseline chain: agent replica → link → middle replica → link → hub replica.
const docNow = () => store.loadEpoch(store.status().epoch);
const hubNode = new SyncNode(A.clone(docNow()));
const midNode = new SyncNode(A.clone(docNow()));
const agentNode = new SyncNode(A.clone(docNow()));
const amHubLink = await startLink({ name: 'am-mid-hub', target: { port: await hubNode.listen() } });
const amAgentLink = await startLink({ name: 'am-agent-mid', target: { port: await midNode.listen() } });
midNode.dial(amHubLink.port, 20);
agentNode.dial(amAgentLink.port, 20);
await until(() => hubNode.conns.size > 0 && midNode.conns.size > 1 && agentNode.conns.size > 0, 5000);

const links = [...chain.links, amHubLink, amAgentLink];
const slow = { delayMs: DELAY };
for (const l of links) {
  const r = l.control.update({ uplink: slow, downlink: slow });
  if (!r.ok) throw new Error(r.problems.join('; '));
  l.control.force('down');
}
await new Promise((r) => setTimeout(r, 300));

const dl: number[] = [];
const am: number[] = [];
for (let s = 0; s < SAMPLES; s++) {
  const runId = ids();
  recordPlan(store, runId, realPlan(comps[s % PRIOR]!, 'changes', s + 1, Date.now(), 3), cadenceS);
  agentNode.update(A.merge(A.clone(agentNode.doc), docNow()));
  const t0 = performance.now();
  for (const l of links) l.control.force('up');
  const push = engine.pushOnce();
  const bound = 20 * DELAY;
  const [dOk, aOk] = await Promise.all([
    until(() => chain.committed.has(runId), bound),
    until(() => hubNode.doc.runs?.[runId] !== undefined, bound).then((ok) => {
      if (ok) am.push(performance.now() - t0);
      return ok;
    }),
  ]);
  if (dOk) dl.push(chain.committed.get(runId)!.at - t0);
  log('delivery', `sample ${s + 1}`, {
    driftlineMs: dOk ? Math.round(dl.at(-1)!) : null,
    automergeSyncMs: aOk ? Math.round(am.at(-1)!) : null,
    push: (await push).kind,
    amMessages: agentNode.messagesSent + midNode.messagesSent + hubNode.messagesSent,
  });
  for (const l of links) l.control.force('down');
  await new Promise((r) => setTimeout(r, 300));
}
const median = (xs: number[]) =>
  xs.length ? Math.round([...xs].sort((a, b) => a - b)[xs.length >> 1]!) : null;
log('delivery', 'goal: driftline <= 2 hops x (one-way delay + 1 s)', { goalMs: 2 * (DELAY + 1000) });
emit({ oneWayDelayMs: DELAY, hops: 2, driftlineMs: median(dl), automergeSyncMs: median(am) });
for (const n of [agentNode, midNode, hubNode]) n.close();
await amAgentLink.close();
await amHubLink.close();
store.close();
await chain.close();
process.exit(0);
