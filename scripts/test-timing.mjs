#!/usr/bin/env node
// `npm run test:timing`: the slowest test files of the last `npm test` (read from .tmp/test-timing.json,
// written by scripts/slowestFiles.ts). `--top=N` for more or fewer. `--write-weights` keeps the files of
// 5 s or more in scripts/test-weights.json, the order scripts/longestFirst.ts starts files in on a machine
// with no vitest cache yet (a clean clone, CI).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

const file = '.tmp/test-timing.json';
const top = Number(process.argv.find((a) => a.startsWith('--top='))?.slice(6) ?? 20);
if (process.argv.includes('--help')) {
  console.log(
    'Usage: npm run test:timing [-- --top=N] [-- --write-weights]\n\n' +
      '  --top=N           how many of the slowest files to list (20)\n' +
      '  --write-weights   keep every file of 5 s or more in scripts/test-weights.json (the order the\n' +
      '                    next runs start files in where vitest has no results of its own yet)\n\n' +
      'Example:\n  npm test && npm run test:timing -- --top=40',
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
if (process.argv.includes('--write-weights')) {
  const weights = Object.fromEntries(
    rows
      .filter((r) => r.ms >= 5000)
      .sort((a, b) => b.ms - a.ms)
      .map((r) => [r.file, Math.round(r.ms / 1000)]),
  );
  writeFileSync('scripts/test-weights.json', `${JSON.stringify(weights, null, 2)}\n`);
  console.log(
    `test:timing: ${Object.keys(weights).length} files of 5 s or more in scripts/test-weights.json`,
  );
}
