/**
 * Agent documents for the ingest benchmark, written exactly as the edge agent writes them
 * (edge-agent/src/core/doc/agentDoc.ts: `newEpochDoc`, then one change per `recordRun`, runs and cells
 * packed, every other string an ImmutableString, only changed facts written, the `requests` and
 * `confirmed` maps declared with the first facts; an unchanged plan rewrites its cell until the hub's ack
 * says it reads `confirmed` (`confirmApart`), then only writes its `confirmed` entry: decision 330), but
 * through Automerge's handle so that generating 400,000 runs does not take an hour. `checkAgainstAgent`
 * proves the bytes are identical to the agent's own functions.
 */
import * as A from '@automerge/automerge';
import { newEpochDoc, recordRun, recordRuns, toDocValue, updateFacts } from '@driftline/edge-agent';
import { type DocCell, type DocConfirmed, packDocEntry } from '@driftline/protocol';

type Backend = ReturnType<typeof A.getBackend>;
const ZERO = { add: 0, change: 0, destroy: 0, replace: 0, import: 0, drift: 0 };

export interface RunSpec {
  runId: string;
  component: string;
  environment: string;
  status: 'clean' | 'drift';
  planHash: string;
  at: number;
}

function summary(r: RunSpec) {
  return {
    component: r.component,
    environment: r.environment,
    status: r.status,
    counts: r.status === 'drift' ? { ...ZERO, drift: 1 } : ZERO,
    terraformVersion: '1.9.5',
    formatVersion: '1.2',
    git: { commit: 'abcdef1234567', branch: 'main' },
    exitCode: r.status === 'drift' ? 0 : 0,
    startedAt: new Date(r.at - 5000).toISOString(),
    finishedAt: new Date(r.at).toISOString(),
    planHash: r.planHash,
  };
}

/** One agent's document, written through the handle. */
export class FastAgentDoc {
  readonly h: Backend;
  private readonly cellsId: string;
  private readonly runsId: string;
  /** Each cell as readers see it (its confirmed entry applied). */
  private readonly cells = new Map<string, DocCell>();
  /** Each cell's packed entry, what a confirmed entry is written over. */
  private readonly bases = new Map<string, DocCell>();
  /** Cells with a confirmed entry. */
  private readonly apart = new Set<string>();
  private confirmedId = '';
  /**
   * The hub's ack said it reads `confirmed` (`AckPayload.readsConfirmed`, which every hub since decision
   * 330 states for a document with the map): unchanged plans are written there, as the agent then does.
   */
  confirmApart = false;

  constructor(
    site: string,
    agent: string,
    actor: string,
    private readonly facts: (at: number) => Record<string, unknown> | undefined,
  ) {
    this.h = A.getBackend(A.init({ actor }));
    this.h.put('_root', 'site', site);
    this.h.put('_root', 'agent', agent);
    this.h.put('_root', 'epoch', 1, 'int');
    this.h.putObjectFromHydrate('_root', 'cells', {});
    this.h.putObjectFromHydrate('_root', 'runs', {});
    this.h.commit('epoch 1', 0);
    this.cellsId = (this.h.getWithType('_root', 'cells') as [string, string])[1];
    this.runsId = (this.h.getWithType('_root', 'runs') as [string, string])[1];
  }

  /** `recordRun`: a new run and cell, or only a confirmation when the plan is unchanged. */
  record(r: RunSpec): void {
    this.recordBatch([r]);
  }

  /** `recordRuns`: runs that finished together, in one change (the agent's RecordBatcher). */
  recordBatch(rs: readonly RunSpec[]): void {
    for (const r of rs) this.put(r);
    const first = rs[0];
    const last = rs.at(-1);
    if (!first || !last) return;
    const facts = this.facts(last.at);
    if (facts) this.writeFacts(facts);
    this.h.commit(
      !agentNamesRuns() ? null : rs.length === 1 ? `run ${last.runId}` : `runs ${first.runId}..${last.runId}`,
      Math.floor(last.at / 1000),
    );
  }

  private put(r: RunSpec): void {
    const key = `${r.environment}/${r.component}`;
    const cur = this.cells.get(key);
    if (cur && cur.planHash === r.planHash && cur.status === r.status) {
      const next: DocCell = {
        ...cur,
        unchangedSince: cur.unchangedSince ?? cur.plannedAt,
        plannedAt: r.at,
        confirmations: cur.confirmations + 1,
        // As the agent: the cell names the commit planned last.
        commit: summary(r).git.commit as DocCell['commit'],
      };
      this.writeCell(key, next, this.confirmApart);
    } else {
      const s = summary(r);
      this.h.put(
        this.runsId,
        r.runId,
        packDocEntry({
          runId: r.runId as DocCell['runId'],
          environment: r.environment,
          component: r.component,
          summary: s as never,
          recordedAt: r.at,
        }),
        'str',
      );
      const cell: DocCell = {
        environment: r.environment,
        component: r.component,
        runId: r.runId as DocCell['runId'],
        status: r.status,
        commit: s.git.commit as DocCell['commit'],
        counts: s.counts,
        planHash: r.planHash as DocCell['planHash'],
        plannedAt: r.at,
        confirmations: 0,
      };
      this.writeCell(key, cell, false);
    }
  }

  /** The agent's `writeCell` (edge-agent/src/core/doc/confirmApart.ts). */
  private writeCell(key: string, cell: DocCell, apart: boolean): void {
    this.cells.set(key, cell);
    const base = this.bases.get(key);
    const entry = apart && base ? confirmedEntry(base, cell) : null;
    if (entry) {
      this.h.put(this.confirmedId, key, JSON.stringify(entry), 'str');
      this.apart.add(key);
      return;
    }
    this.h.put(this.cellsId, key, packDocEntry(cell), 'str');
    this.bases.set(key, cell);
    if (this.apart.delete(key)) this.h.delete(this.confirmedId, key);
  }

  /** `updateFacts`: the facts alone, as the agent publishes them at start-up. */
  publishFacts(facts: Record<string, unknown>, at: number): void {
    this.writeFacts(facts);
    this.h.commit('facts', Math.floor(at / 1000));
  }

  private current: Record<string, unknown> | null = null;
  private factsId = '';

  /** The agent's `writeFacts`: the whole object the first time, afterwards only what differs. */
  private writeFacts(facts: Record<string, unknown>): void {
    const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
    const put = (obj: string, key: string, v: unknown) => {
      if (typeof v === 'string') this.h.put(obj, key, v, 'str');
      else if (typeof v === 'number') this.h.put(obj, key, v, Number.isInteger(v) ? 'int' : 'f64');
      else if (typeof v === 'boolean') this.h.put(obj, key, v, 'boolean');
      else this.h.putObjectFromHydrate(obj, key, toDocValue(v));
    };
    if (!this.current) {
      // As the agent's writeFacts: the maps that declare what it confirms (decisions 230, 330).
      this.h.putObjectFromHydrate('_root', 'requests', {});
      this.confirmedId = this.h.putObjectFromHydrate('_root', 'confirmed', {});
      this.factsId = this.h.putObjectFromHydrate('_root', 'facts', toDocValue(facts));
      this.current = JSON.parse(JSON.stringify(facts));
      return;
    }
    const cur = this.current;
    for (const [k, v] of Object.entries(facts)) {
      const old = cur[k];
      if (v === undefined) {
        if (k in cur) this.h.delete(this.factsId, k);
      } else if (same(old, v)) {
        // unchanged: no operation
      } else if (
        v &&
        typeof v === 'object' &&
        !Array.isArray(v) &&
        old &&
        typeof old === 'object' &&
        !Array.isArray(old)
      ) {
        const objId = (this.h.getWithType(this.factsId, k) as [string, string])[1];
        for (const [kk, vv] of Object.entries(v))
          if (!same((old as Record<string, unknown>)[kk], vv)) put(objId, kk, vv);
        for (const kk of Object.keys(old)) if (!(kk in v)) this.h.delete(objId, kk);
      } else {
        put(this.factsId, k, v);
      }
    }
    this.current = JSON.parse(JSON.stringify({ ...cur, ...facts }));
    for (const [k, v] of Object.entries(facts)) if (v === undefined) delete this.current?.[k];
  }
}

let namesRuns: boolean | null = null;
/**
 * Whether the agent's `recordRuns` gives its change a message (`run <runId>`); later agents write none
 * (decision 370). Asked of the agent once, so that the bench follows it either way.
 */
function agentNamesRuns(): boolean {
  if (namesRuns === null) {
    const doc = newEpochDoc('s', 'a', 1, {}, 'cd'.repeat(16));
    const at = Date.parse('2025-06-01T12:00:00.000Z');
    const spec: RunSpec = {
      runId: `01JZ${'0'.repeat(22)}`,
      component: 'c',
      environment: 'prod',
      status: 'clean',
      planHash: 'a'.repeat(64),
      at,
    };
    const next = recordRuns(doc, [
      { runId: spec.runId, summary: summary(spec) as never, recordedAt: at },
    ]).doc;
    const change = A.getLastLocalChange(next);
    namesRuns = change ? A.decodeChange(change).message !== null : true;
  }
  return namesRuns;
}

/** The agent's `confirmedEntry` (edge-agent/src/core/doc/confirmApart.ts; checkAgainstAgent proves it). */
function confirmedEntry(base: DocCell, cell: DocCell): DocConfirmed | null {
  if (base.runId !== cell.runId || cell.plannedAt < base.plannedAt) return null;
  const n = cell.confirmations - base.confirmations;
  if (n < 1) return null;
  return {
    at: cell.plannedAt,
    n,
    ...(cell.commit && cell.commit !== base.commit ? { commit: cell.commit } : {}),
  };
}

/** Throws unless FastAgentDoc writes byte-for-byte what the agent's own `recordRun(s)` writes. */
export function checkAgainstAgent(factsAt: (at: number) => Record<string, unknown> | undefined): void {
  // The same facts for both writers, however often they ask.
  const memo = new Map<number, Record<string, unknown> | undefined>();
  const facts = (at: number) => {
    if (!memo.has(at)) memo.set(at, factsAt(at));
    return memo.get(at);
  };
  const actor = 'ab'.repeat(16);
  const at0 = Date.parse('2025-06-01T12:00:00.000Z');
  const runs: RunSpec[] = [0, 1, 0, 1, 0].map((c, i) => ({
    runId: `01JX${String(i).padStart(22, '0')}`,
    component: `comp-${c}`,
    environment: 'prod',
    status: c === 1 ? 'drift' : 'clean',
    planHash: (i === 3 ? 'b' : 'a').repeat(64),
    at: at0 + i * 1000,
  }));
  let slow = newEpochDoc('site-0', 'a0', 1, {}, actor);
  const fast = new FastAgentDoc('site-0', 'a0', actor, facts);
  const first = facts(at0 - 1000);
  if (first) {
    slow = updateFacts(slow, first as never, at0 - 1000);
    fast.publishFacts(first, at0 - 1000);
  }
  const input = (r: RunSpec) => ({ runId: r.runId, summary: summary(r) as never, recordedAt: r.at });
  // Two runs one by one, then three that finished together (one of them a second run of a cell).
  for (const r of runs.slice(0, 2)) {
    slow = recordRun(slow, input(r), facts(r.at) as never).doc;
    fast.record(r);
  }
  const batch = runs.slice(2);
  slow = recordRuns(slow, batch.map(input), facts(batch.at(-1)?.at ?? 0) as never).doc;
  fast.recordBatch(batch);
  // Once the hub's ack says it reads `confirmed`: unchanged plans written apart, twice for one cell, one
  // changed plan that folds its confirmed entry back into the cell.
  const later: RunSpec[] = [0, 1, 0, 1].map((c, i) => ({
    runId: `01JY${String(i).padStart(22, '0')}`,
    component: `comp-${c}`,
    environment: 'prod',
    status: c === 1 ? 'drift' : 'clean',
    planHash: (i === 3 ? 'c' : c === 1 ? 'b' : 'a').repeat(64),
    at: at0 + (10 + i) * 1000,
  }));
  fast.confirmApart = true;
  for (const group of [later.slice(0, 2), later.slice(2)]) {
    slow = recordRuns(slow, group.map(input), facts(group.at(-1)?.at ?? 0) as never, null, true).doc;
    fast.recordBatch(group);
  }
  const a = A.saveSince(slow, []);
  const b = fast.h.saveSince([]);
  if (a.length !== b.length || a.some((x, i) => x !== b[i]))
    throw new Error('bench documents differ from what edge-agent recordRun writes: fix FastAgentDoc');
  if (!A.save(slow).length || Object.keys(A.toJS(slow).confirmed ?? {}).length !== 1)
    throw new Error('bench check: the agent wrote no confirmed entry apart: update checkAgainstAgent');
}
