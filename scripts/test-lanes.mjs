#!/usr/bin/env node
// The test lanes (issue 40; docs/decisions/440-compiled-programs.md). `npm test` runs every file; `npm run
// test:unit` runs the files that start no process, found by walking each test file's imports inside the
// checkout: a file that reaches `node:child_process` or a browser driver (playwright-core) may start one
// and stays in the full lane only. `--list` prints the lane instead of running it.
//
//   npm run test:unit               vitest on the process-free files
//   node scripts/test-lanes.mjs --list [--processes]
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const WORKSPACES = ['protocol', 'hop', 'edge-agent', 'relay', 'hub', 'ui', 'simulation'];
const STARTS_PROCESSES = /['"](node:)?child_process['"]|['"]playwright-core['"]/;
const IMPORT =
  /(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\s*\(\s*['"]([^'"]+)['"]\s*\)|import\s+['"]([^'"]+)['"]/g;

function testFiles() {
  const out = [];
  for (const w of WORKSPACES) {
    const stack = [join(ROOT, w)];
    while (stack.length) {
      const d = stack.pop();
      for (const e of readdirSync(d, { withFileTypes: true })) {
        if (e.name === 'node_modules' || e.name === 'dist' || e.name.startsWith('.')) continue;
        const p = join(d, e.name);
        if (e.isDirectory()) stack.push(p);
        else if (/\.test\.tsx?$/.test(e.name)) out.push(p);
      }
    }
  }
  return out.sort();
}

/** A workspace package's export, as its package.json maps it (`@driftline/hop/client` → hop/src/client…). */
function workspaceExport(spec) {
  const m = /^@driftline\/([^/]+)(\/.*)?$/.exec(spec);
  if (!m) return null;
  const pkgDir = join(ROOT, m[1]);
  const pkg = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8'));
  const key = m[2] ? `.${m[2]}` : '.';
  const target = typeof pkg.exports === 'string' ? pkg.exports : pkg.exports?.[key];
  const file = typeof target === 'string' ? target : (target?.import ?? target?.default);
  return file ? join(pkgDir, file) : null;
}

function resolveImport(from, spec) {
  if (spec.startsWith('@driftline/')) return workspaceExport(spec);
  if (!spec.startsWith('.')) return null;
  const base = resolve(dirname(from), spec);
  for (const c of [
    base,
    base.replace(/\.js$/, '.ts'),
    base.replace(/\.js$/, '.tsx'),
    `${base}.ts`,
    `${base}.tsx`,
    join(base, 'index.ts'),
  ])
    if (statSync(c, { throwIfNoEntry: false })?.isFile()) return c;
  return null;
}

const parsed = new Map();
/** A file's own marker and its imports inside the checkout, read once however many walks reach it. */
function parse(f) {
  let p = parsed.get(f);
  if (!p) {
    const text = readFileSync(f, 'utf8');
    const imports = [];
    for (const m of text.matchAll(IMPORT)) {
      const r = resolveImport(f, m[1] ?? m[2] ?? m[3]);
      if (r) imports.push(r);
    }
    p = { marker: STARTS_PROCESSES.test(text), imports };
    parsed.set(f, p);
  }
  return p;
}

/** Whether `file` or anything it imports inside the checkout may start a process (iterative walk). */
function startsProcesses(file) {
  const seen = new Set([file]);
  const stack = [file];
  while (stack.length) {
    const { marker, imports } = parse(stack.pop());
    if (marker) return true;
    for (const r of imports) {
      if (!seen.has(r)) {
        seen.add(r);
        stack.push(r);
      }
    }
  }
  return false;
}

const args = process.argv.slice(2);
if (args.includes('--help')) {
  console.log(
    'Usage: npm run test:unit [-- <vitest args>]\n       node scripts/test-lanes.mjs --list [--processes]\n\nExample:\n  npm run test:unit',
  );
  process.exit(0);
}
const files = testFiles();
const withProcesses = [];
const unit = [];
for (const f of files) {
  (startsProcesses(f) ? withProcesses : unit).push(relative(ROOT, f));
}
if (args.includes('--list')) {
  const lane = args.includes('--processes') ? withProcesses : unit;
  console.log(lane.join('\n'));
  console.error(`${lane.length} of ${files.length} test files`);
  process.exit(0);
}
console.error(`test:unit: ${unit.length} of ${files.length} test files start no process`);
const vitest = join(ROOT, 'node_modules', 'vitest', 'vitest.mjs');
const r = spawnSync(process.execPath, [vitest, 'run', ...args, ...unit], { cwd: ROOT, stdio: 'inherit' });
process.exit(r.status ?? 1);
