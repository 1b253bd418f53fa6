/**
 * Benchmark (not a test): summarising a generated 10,000-resource plan, against `JSON.parse` of the
 * same text as the in-run baseline. Prints JSON. Run: `npx tsx edge-agent/bench/summarize.ts [runs]`.
 */
import { parsePlanText, summarisePlan } from '../src/core/plan/summarisePlan.js';
import { generatePlan } from '../test/genPlan.js';

const runs = Math.max(3, Math.min(50, Number(process.argv[2] ?? 9)));
const resources = 10_000;
const text = JSON.stringify(generatePlan(resources));
const ctx = {
  component: 'bench',
  environment: 'bench',
  startedAt: new Date(0).toISOString(),
  finishedAt: new Date(0).toISOString(),
};

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
}

function time(fn: () => void): number[] {
  fn(); // warm-up
  const out: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    fn();
    out.push(performance.now() - t0);
  }
  return out;
}

let status = '';
const parseMs = time(() => {
  JSON.parse(text);
});
const parseAndSummariseMs = time(() => {
  const p = parsePlanText(text);
  if (!p.ok) throw new Error(p.message);
  const r = summarisePlan(p.value, ctx);
  if (!r.ok) throw new Error(r.message);
  status = r.summary.status;
});
const parsed = JSON.parse(text) as unknown;
const summariseOnlyMs = time(() => {
  summarisePlan(parsed, ctx);
});

const round = (n: number) => Math.round(n * 10) / 10;
console.log(
  JSON.stringify(
    {
      bench: 'summarize',
      resources,
      planBytes: text.length,
      runs,
      status,
      jsonParseMedianMs: round(median(parseMs)),
      summariseMedianMs: round(median(summariseOnlyMs)),
      parseAndSummariseMedianMs: round(median(parseAndSummariseMs)),
      ratioToJsonParse: round(median(parseAndSummariseMs) / median(parseMs)),
      node: process.version,
    },
    null,
    2,
  ),
);
