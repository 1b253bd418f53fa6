#!/usr/bin/env node
// `npm run build` (and `npm install`'s prepare): every program compiled to one ESM file per entry with
// esbuild, and the dashboard built with Vite, so that the programs start without compiling TypeScript
// (docs/decisions/440-compiled-programs.md). Workspace code and third-party packages are bundled in; the
// packages that load a native addon or WebAssembly stay imports resolved from node_modules at run time.
//
//   node scripts/build.mjs              build everything
//   node scripts/build.mjs --if-stale   build only what is older than one of its sources (vitest's global
//                                       set-up and `npm start` run this: a forgotten build is never tested)
//   node scripts/build.mjs --programs   programs only, not the dashboard
//   node scripts/build.mjs --check      exit 1 naming what is stale, build nothing
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Every compiled entry: the source it starts from and the file its bin shim or Worker loads. */
export const TARGETS = [
  { entry: 'hub/src/cli.ts', out: 'hub/dist/hub.mjs' },
  { entry: 'hub/src/adapters/threads/mergeWorkerMain.ts', out: 'hub/dist/mergeWorker.js' },
  { entry: 'relay/src/cli.ts', out: 'relay/dist/relay.mjs' },
  { entry: 'edge-agent/src/cli.ts', out: 'edge-agent/dist/edge-agent.mjs' },
  { entry: 'simulation/src/fakeTerraform.ts', out: 'simulation/dist/terraform.mjs' },
  { entry: 'simulation/src/cli.ts', out: 'simulation/dist/sim.mjs' },
  { entry: 'simulation/src/compose/setup.ts', out: 'simulation/dist/compose-setup.mjs' },
];

const args = new Set(process.argv.slice(2));
if (args.has('--help') || args.has('-h')) {
  console.log(
    'Usage: node scripts/build.mjs [--if-stale] [--programs] [--check] [--quiet]\n\n' +
      'Compiles hub, relay, edge-agent and the simulation programs to <workspace>/dist with esbuild and\n' +
      'builds the dashboard (ui/dist) with Vite.\n\nExample:\n  npm run build\n  node scripts/build.mjs --if-stale',
  );
  process.exit(0);
}
const ifStale = args.has('--if-stale') || args.has('--check');
const quiet = args.has('--quiet');
const say = (m) => {
  if (!quiet) console.error(`build: ${m}`);
};

/** Newest modification time (ms) of `files`, or Infinity when one is missing (so it counts as newer). */
function newest(files) {
  let t = 0;
  for (const f of files) {
    if (!existsSync(f)) return Number.POSITIVE_INFINITY;
    t = Math.max(t, statSync(f).mtimeMs);
  }
  return t;
}

/** Every file under `dir` (recursive), skipping node_modules and build output. */
function filesUnder(dir) {
  const out = [];
  const stack = [dir];
  while (stack.length) {
    const d = stack.pop();
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.name === 'node_modules' || e.name === 'dist') continue;
      const p = join(d, e.name);
      if (e.isDirectory()) stack.push(p);
      else out.push(p);
    }
  }
  return out;
}

/** The sources a compiled target was made from (its esbuild metafile), or null when never built. */
function inputsOf(target) {
  const meta = join(ROOT, `${target.out}.meta.json`);
  if (!existsSync(meta) || !existsSync(join(ROOT, target.out))) return null;
  const m = JSON.parse(readFileSync(meta, 'utf8'));
  return Object.keys(m.inputs ?? {})
    .filter((p) => !p.includes('node_modules'))
    .map((p) => join(ROOT, p));
}

function stalePrograms() {
  return TARGETS.filter((t) => {
    const inputs = inputsOf(t);
    if (!inputs) return true;
    return newest(inputs) > statSync(join(ROOT, t.out)).mtimeMs;
  });
}

function uiStale() {
  const index = join(ROOT, 'ui', 'dist', 'index.html');
  if (!existsSync(index)) return true;
  const sources = [
    ...filesUnder(join(ROOT, 'ui', 'src')),
    ...filesUnder(join(ROOT, 'protocol', 'src')),
    join(ROOT, 'ui', 'index.html'),
    join(ROOT, 'ui', 'vite.config.ts'),
  ];
  return newest(sources.filter((f) => !f.includes('.test.'))) > statSync(index).mtimeMs;
}

// Third-party packages are compiled in too, but for those that load a native addon or WebAssembly from
// their own folder: those stay imports and load as they always have. One file of plain JavaScript starts
// faster than hundreds of packages resolved and read one by one: `hub --version` took 0.50 CPU-s with every
// package an import, 0.33 with them compiled in (docs/decisions/441-longest-files-first.md); the suite
// starts programs some 1,300 times.
const NATIVE = new Set(['better-sqlite3', '@automerge/automerge', 'cbor-extract', 'pg-native']);
const packageName = (path) =>
  path
    .split('/')
    .slice(0, path.startsWith('@') ? 2 : 1)
    .join('/');
const externalNative = {
  name: 'external-native',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (a) =>
      NATIVE.has(packageName(a.path)) ? { path: a.path, external: true } : undefined,
    );
  },
};
// CommonJS packages compiled into an ES module still call require() for Node's own modules and read
// __dirname: the banner gives them both, for the output file's own folder.
const BANNER = [
  "import { createRequire as __dlRequire } from 'node:module';",
  "import { fileURLToPath as __dlPath } from 'node:url';",
  "import { dirname as __dlDir } from 'node:path';",
  'const require = __dlRequire(import.meta.url);',
  'const __filename = __dlPath(import.meta.url);',
  'const __dirname = __dlDir(__filename);',
].join(' ');

async function buildPrograms(targets) {
  const { build } = await import('esbuild');
  // Independent entries: esbuild runs them side by side.
  await Promise.all(
    targets.map(async (t) => {
      const started = Date.now();
      const r = await build({
        absWorkingDir: ROOT,
        entryPoints: [t.entry],
        outfile: t.out,
        bundle: true,
        platform: 'node',
        format: 'esm',
        target: 'node20',
        sourcemap: 'linked',
        metafile: true,
        plugins: [externalNative],
        banner: { js: BANNER },
        logLevel: 'warning',
      });
      writeFileSync(join(ROOT, `${t.out}.meta.json`), JSON.stringify({ inputs: r.metafile.inputs }));
      say(`${t.out} (${Date.now() - started} ms)`);
    }),
  );
}

function buildUi() {
  const npm = process.env.npm_execpath ? [process.execPath, [process.env.npm_execpath]] : ['npm', []];
  const r = spawnSync(npm[0], [...npm[1], 'run', 'build', '-w', '@driftline/ui'], {
    cwd: ROOT,
    stdio: quiet ? ['ignore', 'ignore', 'inherit'] : 'inherit',
  });
  if (r.status !== 0) {
    console.error(
      'build: the dashboard (ui/dist) did not build; the hub would answer / with a text page. Fix the error above and run npm run build again.',
    );
    process.exit(r.status ?? 1);
  }
}

// The Dockerfile's `npm ci` layer sees only package.json files: nothing to build there yet.
if (!existsSync(join(ROOT, 'hub', 'src', 'cli.ts'))) {
  say('no sources here (only manifests): nothing is built now');
  process.exit(0);
}

const programs = ifStale ? stalePrograms() : TARGETS;
const ui = !args.has('--programs') && (ifStale ? uiStale() : true);
if (args.has('--check')) {
  const stale = [...programs.map((t) => t.out), ...(ui ? ['ui/dist'] : [])];
  if (stale.length) {
    console.error(`build: stale: ${stale.join(', ')} (run npm run build)`);
    process.exit(1);
  }
  process.exit(0);
}
if (programs.length) await buildPrograms(programs);
if (ui) buildUi();
if (!programs.length && !ui) say('up to date');
