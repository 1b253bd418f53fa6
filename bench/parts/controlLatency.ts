/**
 * controlLatency (issue 35; docs/decisions/270-control-first.md): a plan request made at the hub, until
 * the agent takes it (the median of a few), while the agent is busy (its detail upload in flight), hub ← relay ← agent as in the
 * demo's Mars site: the relay beside the hub (an undelayed link, pulling every second), the agent behind a
 * link of one-way delay D (Mars ×60: 12 s; quick: 2 s). In one-way light times, beside the floor (hub →
 * relay → agent light time: half a health request's round trip over each link) measured in the same run. Driftline as wired
 * (`sync.downlinkHoldS` 55: a held pull at the relay) and the baseline of pulls once per sync interval
 * (`downlinkHoldS` 0, the default 30 s), each on a fresh chain, the agent on hop v2 as by default (decision 495). Approvals and publications travel the same
 * downlink path (control bundles, then blob manifests) and are not measured apart.
 */
import { createHash, randomBytes } from 'node:crypto';
import { SyncEngine, SyncLoop } from '@driftline/edge-agent';
import { addUser, sha256Hex } from '@driftline/hub';
import {
  cryptoRandomBytes,
  generateSigningKeyPair,
  monotonicUlid,
  publicKeyToText,
} from '@driftline/protocol';
import {
  AGENT,
  agentStore,
  emit,
  httpUplink,
  isQuick,
  log,
  newRunId,
  SITE,
  until,
  wire2State,
} from '../lib/agent.js';
import { realPlan } from '../lib/plans.js';
import { startChain } from '../lib/topology.js';

const D = isQuick ? 2000 : 12_000;
/** Uplink rate: the detail upload outlasts the measurement many times over. */
const UPLINK_BPS = 16_000;
const DETAIL_BYTES = isQuick ? 64 * 1024 : 512 * 1024;
/** Requests per variant; the median is reported. */
const SAMPLES = isQuick ? 1 : 3;
const silent = { info: () => {}, warn: () => {} };

async function measure(holdS: number) {
  const keys = await generateSigningKeyPair();
  const link = { uplink: { delayMs: D, bandwidthBps: UPLINK_BPS }, downlink: { delayMs: D } };
  const chain = await startChain(keys.publicKey, link, { pullIntervalMs: 1000 }, {});
  const token = randomBytes(24).toString('base64url');
  const u = await addUser(
    chain.hub.store,
    { name: 'bench', roles: ['operator'], tokenSha256: sha256Hex(token) },
    Date.now(),
  );
  if (!u.ok) throw new Error(u.error);
  const store = agentStore();
  const taken = new Map<string, number>();
  // the agent's default wire: hop v2 (on h2c) where the relay speaks it, as `edge-agent run` wires it
  const state = wire2State();
  const wire2 = { privateKey: keys.privateKey, publicKey: await publicKeyToText(keys.publicKey), state };
  const engine = new SyncEngine({
    site: SITE,
    agent: AGENT,
    store,
    wire2: state,
    uplinks: [httpUplink(store, chain.relayUrl, chain.agentToken, { wire2 })],
    privateKey: keys.privateKey,
    hubPublicKey: chain.hubPublicKey,
    allowsCell: () => true,
    onPlanRequest: (r) => taken.set(r.requestId, performance.now()),
    newBundleId: monotonicUlid(Date.now, cryptoRandomBytes),
    now: Date.now,
    log: silent,
  });
  const loop = new SyncLoop({
    engine,
    intervalMs: 30_000,
    holdS,
    backoffBaseMs: 500,
    backoffCapMs: 2000,
    setTimer: (ms, fn) => {
      const t = setTimeout(fn, ms);
      return () => clearTimeout(t);
    },
    random: Math.random,
    log: silent,
  });
  try {
    // The floor, measured over the same links: half a health request's round trip over each.
    const half = async (url: string) => {
      const t0 = performance.now();
      await (await fetch(url)).arrayBuffer();
      return (performance.now() - t0) / 2;
    };
    const floorMs =
      (await half(`${chain.relayUrl}/v1/health`)) +
      (await half(`http://127.0.0.1:${chain.hubLink.port}/v1/health`));
    const runId = newRunId()();
    const plan = realPlan('app', 'changes', 0, Date.now(), 0);
    // A detail that takes minutes at this rate (incompressible bytes stand in for a large plan's detail).
    const bytes = new Uint8Array(randomBytes(DETAIL_BYTES));
    store.record({
      runId,
      summary: plan.summary,
      detail: {
        sha256: createHash('sha256').update(bytes).digest('hex'),
        bytes,
        contentType: 'application/octet-stream',
      },
      facts: {
        version: '0.1.0',
        cadenceS: { 'prod/app': 900 },
        contactIntervalS: 900,
        upstream: chain.relayUrl,
      },
    });
    loop.start();
    // The result is at the hub: the agent now uploads its detail, for minutes at this rate.
    if (!(await until(() => chain.committed.has(runId), 20 * D + 30_000, 50)))
      throw new Error('the result never reached the hub');
    // A connected, busy agent: the push's ack has come back and a held pull sits at the relay.
    const samples: number[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      await new Promise((r) => setTimeout(r, 6 * D));
      const t0 = performance.now();
      const res = await fetch(`${chain.hubUrl}/api/plan-requests`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ site: SITE, environment: 'prod', component: 'app' }),
      });
      if (res.status !== 201) throw new Error(`plan request answered ${res.status}`);
      const { requestId } = (await res.json()) as { requestId: string };
      if (!(await until(() => taken.has(requestId), 40 * D + 60_000, 20)))
        throw new Error('the agent never took the plan request');
      samples.push((taken.get(requestId) as number) - t0);
    }
    const ms = [...samples].sort((a, b) => a - b)[Math.floor(samples.length / 2)] as number;
    return {
      ms: Math.round(ms),
      lightTimes: +(ms / D).toFixed(2),
      samplesMs: samples.map(Math.round),
      floorMs: Math.round(floorMs),
      detailBytes: DETAIL_BYTES,
    };
  } finally {
    await loop.stop();
    await chain.close();
  }
}

log('controlLatency', 'one-way delay of the agent’s link (the relay beside the hub: no delay)', { D });
const held = await measure(55);
/** The floor (hub → relay → agent light time), measured in the held run. */
const floorMs = held.floorMs;
log('controlLatency', 'held pulls (sync.downlinkHoldS 55)', held);
const interval = await measure(0);
log('controlLatency', 'baseline: a pull per sync interval (downlinkHoldS 0)', interval);
emit({
  oneWayDelayMs: D,
  floorMs,
  planRequestMs: held.ms,
  planRequestVsFloor: +(held.ms / floorMs).toFixed(3),
  baselineMs: interval.ms,
  baselineVsFloor: +(interval.ms / floorMs).toFixed(3),
  pass: { receiptWithin1_2xFloor: held.ms <= 1.2 * floorMs },
});
process.exit(0);
