import * as A from '@automerge/automerge';
import {
  type AgentDoc,
  BATCH_CONTENT_TYPE,
  cryptoRandomBytes,
  encodeBatch,
  monotonicUlid,
  type PlanStatus,
  packDocEntry,
} from '@driftline/protocol';
import type { AgentSim } from './agentSim.js';

/** A commit id of one repeated hex digit: `sha('a')`. */
export const sha = (c: string) => c.repeat(40);

const ids = new WeakMap<AgentSim, () => string>();
const nextId = (sim: AgentSim) => {
  let f = ids.get(sim);
  if (!f) {
    f = monotonicUlid(() => sim.clock.now(), cryptoRandomBytes);
    ids.set(sim, f);
  }
  return f();
};

/** What the agent reports about its git source, mirrors and providers (AgentFacts' ref fields). */
export interface RefFacts {
  refs?: Record<string, string[]>;
  sources?: Record<string, Record<string, string>>;
  providers?: string[];
  platform?: string;
}

/** Sets the agent's ref facts (kept with its other facts), as an agent with git sources reports them. */
export function reportRefs(sim: AgentSim, facts: RefFacts): void {
  const at = sim.clock.now();
  sim.doc = A.change(sim.doc, (d) => {
    const prev = JSON.parse(JSON.stringify(d.facts ?? {})) as Record<string, unknown>;
    d.facts = {
      version: '0.1.0',
      cadenceS: {},
      contactIntervalS: 600,
      queueDepth: 0,
      ...prev,
      ...facts,
      reportedAt: at,
    } as never;
  });
}

/**
 * Records a plan of `ref` at `commit` as the agent does: the run, and the cell keyed
 * `environment/component` when `ref` is the component's default ref, else `environment/component@ref`.
 */
export function planRef(
  sim: AgentSim,
  o: {
    environment: string;
    component: string;
    ref: string;
    commit: string;
    status?: PlanStatus;
    needs?: string[];
    defaultRef?: boolean;
    reason?: string;
  },
): string {
  const runId = nextId(sim);
  const at = sim.clock.now();
  const status = o.status ?? 'changes';
  const counts = {
    add: status === 'changes' ? 2 : 0,
    change: status === 'changes' ? 1 : 0,
    destroy: 0,
    replace: 0,
    import: 0,
    drift: status === 'drift' ? 1 : 0,
  };
  const failed = status === 'failed' || status === 'blocked';
  const reason = o.reason ?? (status === 'failed' ? 'exit-1' : status === 'blocked' ? 'init' : undefined);
  const key = o.defaultRef ? `${o.environment}/${o.component}` : `${o.environment}/${o.component}@${o.ref}`;
  const pack = <T extends object>(v: T) => new A.ImmutableString(packDocEntry(v as never)) as unknown as T;
  sim.doc = A.change(sim.doc, (d: AgentDoc) => {
    d.runs[runId] = pack({
      runId: runId as never,
      environment: o.environment,
      component: o.component,
      ref: o.ref,
      summary: {
        component: o.component,
        environment: o.environment,
        status,
        ...(failed ? {} : { counts }),
        ...(reason ? { reason } : {}),
        ...(o.needs ? { needs: o.needs } : {}),
        ref: o.ref,
        git: { commit: o.commit },
        startedAt: new Date(at - 1000).toISOString(),
        finishedAt: new Date(at).toISOString(),
      },
      recordedAt: at,
    });
    d.cells[key] = pack({
      environment: o.environment,
      component: o.component,
      ref: o.ref,
      commit: o.commit,
      ...(o.needs ? { needs: o.needs } : {}),
      runId: runId as never,
      status,
      ...(failed ? {} : { counts }),
      ...(reason ? { reason } : {}),
      plannedAt: at,
      confirmations: 0,
    });
  });
  return runId;
}

/** Sends the agent's changes since its last push through the relay's peer token; acks them locally. */
export async function push(hopUrl: string, relay: Record<string, string>, sim: AgentSim): Promise<void> {
  const res = await fetch(`${hopUrl}/v1/bundles`, {
    method: 'POST',
    headers: { ...relay, 'content-type': BATCH_CONTENT_TYPE },
    body: encodeBatch([await sim.delta()]) as Uint8Array<ArrayBuffer>,
  });
  if (res.status !== 200) throw new Error(`push answered ${res.status}: ${await res.text()}`);
  const body = (await res.json()) as { receipts: { status: string; message?: string }[] };
  const bad = body.receipts.filter((r) => r.status !== 'stored');
  if (bad.length) throw new Error(`push refused: ${JSON.stringify(bad)}`);
  sim.acked = A.getHeads(sim.doc);
}
