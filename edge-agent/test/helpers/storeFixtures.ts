import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeUlid, type PlanStatus, type PlanSummary } from '@driftline/protocol';
import type { RecordRunInput } from '../../src/ports/Ledger.js';

export function tempDir(prefix = 'driftline-agent-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

let seq = 0;
export function runId(t = 1_700_000_000_000): string {
  seq++;
  const r = new Uint8Array(10);
  new DataView(r.buffer).setUint32(6, seq);
  return encodeUlid(t, r);
}

export function summary(over: Partial<PlanSummary> & { status?: PlanStatus } = {}): PlanSummary {
  const finishedAt = over.finishedAt ?? new Date(1_700_000_000_000 + seq * 1000).toISOString();
  return {
    component: 'network',
    environment: 'prod',
    status: 'changes',
    counts: { add: 1, change: 0, destroy: 0, replace: 0, import: 0, drift: 0 },
    resources: [
      {
        address: 'aws_vpc.main',
        type: 'aws_vpc',
        actions: ['create'],
        drift: false,
        changedAttributes: ['cidr_block'],
      },
    ],
    startedAt: finishedAt,
    finishedAt,
    planHash: 'a'.repeat(64) as PlanSummary['planHash'],
    ...over,
  };
}

export function detail(seed: string, size = 200) {
  const bytes = new TextEncoder().encode(seed.repeat(Math.ceil(size / seed.length)).slice(0, size));
  return {
    sha256: seed
      .padEnd(64, '0')
      .slice(0, 64)
      .replace(/[^0-9a-f]/g, 'e'),
    bytes,
    contentType: 'application/vnd.driftline.plan-detail+json;encoding=br',
  };
}

/** When plan `i` of round `round` (hours after 2030-01-01T00:00Z) finished: one second apart. */
export const roundAt = (round: number, i: number) =>
  new Date(Date.UTC(2030, 0, 1, round) + i * 1000).toISOString();
/** Component `i`'s name: `component-007`. */
export const roundComponent = (i: number) => `component-${String(i).padStart(3, '0')}`;
/** Plan `i` of a round, its plan hash `hash` × 64; `everyS`: the cadence of the cron round that ran it. */
export const roundInput = (round: number, i: number, hash = 'a', everyS?: number): RecordRunInput => ({
  runId: runId(),
  summary: summary({
    component: roundComponent(i),
    finishedAt: roundAt(round, i),
    planHash: hash.repeat(64) as never,
  }),
  ...(everyS ? { scheduledEveryS: everyS } : {}),
});
