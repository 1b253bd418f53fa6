import * as A from '@automerge/automerge';
import {
  type AgentDoc,
  type Approval,
  type ApprovalClaims,
  cryptoRandomBytes,
  type DocApply,
  decodeBatch,
  decodeBundle,
  decodePayload,
  generateSigningKeyPair,
  monotonicUlid,
  packDocEntry,
  signApproval,
} from '@driftline/protocol';
import { enrol } from '../src/core/enrolment.js';
import { AgentSim } from './agentSim.js';
import type { TestHub } from './hubFixture.js';
import { push, sha } from './refSim.js';

/** The planned commit and saved plan file hash of the apply-enabled runs these tests make. */
export const COMMIT = sha('c');
export const PLAN_FILE = 'e'.repeat(64);

/** A site with apply enabled: enrols `mars-1/a1` at the fixture hub, returns its simulated agent. */
export async function applySite(h: TestHub, site = 'mars-1'): Promise<AgentSim> {
  const sim = await AgentSim.create(site, 'a1', h.clock);
  const e = await enrol(h.hub.store, { site, agent: 'a1', key: await sim.publicKeyText() }, h.clock.now());
  if (!e.ok) throw new Error(e.error);
  return sim;
}

/** Records a plan of `prod/app` on main that kept its plan file (as an apply-enabled cell does) and pushes it. */
export async function planWithFile(
  h: TestHub,
  sim: AgentSim,
  o: { planFileSha256?: string | null; commit?: string } = {},
): Promise<string> {
  const runId = monotonicUlid(() => sim.clock.now(), cryptoRandomBytes)();
  const at = sim.clock.now();
  const counts = { add: 1, change: 0, destroy: 0, replace: 0, import: 0, drift: 0 };
  const commit = o.commit ?? COMMIT;
  const planFile = o.planFileSha256 === undefined ? PLAN_FILE : o.planFileSha256;
  const pack = <T extends object>(v: T) => new A.ImmutableString(packDocEntry(v as never)) as unknown as T;
  sim.doc = A.change(sim.doc, (d: AgentDoc) => {
    d.runs[runId] = pack({
      runId: runId as never,
      environment: 'prod',
      component: 'app',
      ref: 'main',
      summary: {
        component: 'app',
        environment: 'prod',
        status: 'changes',
        counts,
        ref: 'main',
        git: { commit },
        ...(planFile ? { planFileSha256: planFile as never } : {}),
        startedAt: new Date(at - 1000).toISOString(),
        finishedAt: new Date(at).toISOString(),
      },
      recordedAt: at,
    });
    d.cells['prod/app'] = pack({
      environment: 'prod',
      component: 'app',
      ref: 'main',
      commit,
      runId: runId as never,
      status: 'changes',
      counts,
      plannedAt: at,
      confirmations: 0,
    });
  });
  await push(h.hopUrl, h.relay, sim);
  return runId;
}

/** Writes the agent's `applies[runId]` record (a map, as the agent writes it) and pushes it. */
export async function reportApply(h: TestHub, sim: AgentSim, apply: DocApply): Promise<void> {
  sim.doc = A.change(sim.doc, (d: AgentDoc) => {
    d.applies ??= {};
    d.applies[apply.runId] = JSON.parse(JSON.stringify(apply));
  });
  await push(h.hopUrl, h.relay, sim);
}

/** An approver's key pair. */
export const approverKeys = (): Promise<CryptoKeyPair> => generateSigningKeyPair();

/** Claims approving `runId` of the apply site's `prod/app`, approved now, for a day. */
export function claimsFor(h: TestHub, runId: string, over: Partial<ApprovalClaims> = {}): ApprovalClaims {
  const now = h.clock.now();
  return {
    v: 1,
    approvalId: monotonicUlid(() => now, cryptoRandomBytes)(),
    site: 'mars-1' as never,
    environment: 'prod',
    component: 'app',
    ref: 'main',
    commit: COMMIT,
    runId: runId as never,
    planFileSha256: PLAN_FILE as never,
    approvedAt: now,
    expiresAt: now + 86_400_000,
    ...over,
  };
}

/** Signs `claims` with `pair`. */
export const sign = (claims: ApprovalClaims, pair: CryptoKeyPair): Promise<Approval> =>
  signApproval(claims, pair.privateKey, pair.publicKey);

/** The approval control payloads on a site's downlink, as a relay pulls them. */
export async function approvalsOnDownlink(h: TestHub, site = 'mars-1') {
  const dl = await fetch(`${h.hopUrl}/v1/bundles?for=${site}`, { headers: h.relay });
  const batch = decodeBatch(new Uint8Array(await dl.arrayBuffer()));
  if (!batch.ok) throw batch.error;
  const out: { priority: string; agent: string | undefined; approval: Approval }[] = [];
  for (const raw of batch.value) {
    const b = decodeBundle(raw);
    if (!b.ok || b.value.header.kind !== 'control') continue;
    const p = decodePayload('control', b.value.payload);
    if (!p.ok || p.value.type !== 'approval') continue;
    const dest = b.value.header.destination;
    out.push({
      priority: b.value.header.priority,
      agent: dest === 'hub' ? undefined : dest.agent,
      approval: p.value.approval as Approval,
    });
  }
  return out;
}
