#!/usr/bin/env node
// `npm run test:timing`: the slowest test files of the last `npm test` (read from .tmp/test-timing.json,
// written by scripts/slowestFiles.ts). `--top=N` for more or fewer.
import { existsSync, readFileSync } from 'node:fs';

const file = '.tmp/test-timing.json';
const top = Number(process.argv.find((a) => a.startsWith('--top='))?.slice(6) ?? 20);
if (process.argv.includes('--help')) {
  console.log(
    'Usage: npm run test:timing [-- --top=N]\n\nExample:\n  npm test && npm run test:timing -- --top=40',
  );
  process.exit(0);
}
if (!existsSync(file)) {
  console.error(`test:timing: no ${file} yet: run npm test (or npm run test:unit) first`);
  process.exit(1);
}
const rows = JSON.parse(readFileSync(file, 'utf8'));
const total = rows.reduce((s, r) => s + r.ms, 0);
console.log(
  `${Math.min(top, rows.length)} slowest of ${rows.length} test files (${(total / 1000).toFixed(0)} s in all):`,
);
for (const r of rows.slice(0, top))
  console.log(`${(r.ms / 1000).toFixed(1).padStart(7)} s  ${String(r.tests).padStart(3)} tests  ${r.file}`);
