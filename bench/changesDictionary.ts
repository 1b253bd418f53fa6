/**
 * `npx tsx bench/changesDictionary.ts`: prints the sample that hop v2's `dz1` encoding of a push's changes
 * starts from (docs/decisions/510-compact-blob-announcements.md, "The changes against a shared dictionary").
 * Run once: the output is frozen in protocol/src/wire2/changesDictionary.ts, because both ends must hold the
 * same bytes; a different sample is a new encoding (`dz2`), never an edit of this one.
 *
 * The sample is what a push nearly always carries: the Automerge changes an agent writes for changed plans
 * (a run entry and its cell, packed JSON, and the facts a round writes), by the agent's own code.
 */
import * as A from '@automerge/automerge';
import { newEpochDoc, recordRuns } from '@driftline/edge-agent';
import { encodeUlid } from '@driftline/protocol';
import { realPlan } from './lib/plans.js';

const at = Date.UTC(2026, 10, 1, 6, 0, 0);
const runId = (n: number) => encodeUlid(at + n * 1000, new Uint8Array(10).fill(n));
const cadenceS = { 'prod/network': 21_600, 'prod/database': 21_600, 'prod/app': 21_600 };
const facts = (n: number) => ({
  version: '0.1.0',
  cadenceS,
  contactIntervalS: 900,
  upstream: 'http://relay.invalid',
  queueDepth: n,
  reportedAt: at + n * 60_000,
});
const input = (component: string, state: 'changes' | 'drift' | 'clean', n: number) => {
  const p = realPlan(component, state, 1, at + n * 60_000, 2);
  return {
    runId: runId(n),
    summary: p.summary,
    detailBlob: `${n}`.repeat(64).slice(0, 64),
    recordedAt: at + n * 60_000,
  };
};

let doc = newEpochDoc('site', 'agent', 1, {}, '00'.repeat(16));
for (const [n, c] of ['network', 'database', 'app'].entries())
  doc = recordRuns(doc, [input(c, 'clean', n + 1)], facts(0), null).doc;
const base = A.clone(doc);
// least alike last-but-one, most alike last: deflate reaches the end of its dictionary most cheaply
doc = recordRuns(doc, [input('database', 'drift', 5)], facts(1), null).doc;
doc = recordRuns(doc, [input('network', 'changes', 6)], facts(2), null).doc;
const sample = Buffer.concat(A.getChanges(base, doc).map((c) => Buffer.from(c)));
process.stdout.write(`${sample.length} bytes\n${sample.toString('base64')}\n`);
