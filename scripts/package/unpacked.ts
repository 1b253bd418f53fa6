/**
 * The offline package built and unpacked once for everything on this machine that runs it (the
 * end-to-end tests' global set-up, the relay benchmark): kept under
 * `node_modules/.cache/driftline-edge/<key>/` where `<key>` hashes every input of the build (the
 * programs' sources, the lock file, the packaging files, the Node that builds it), so a second run with
 * the same sources unpacks nothing. Concurrent callers (several vitest runs at once) take a lock
 * directory; the one that holds it builds, the others wait and reuse.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join, relative } from 'node:path';
import { buildPackage, ROOT } from './build.js';
import { TARGETS } from './platform.js';

/** Inputs of the package, relative to the checkout: folders walked (tests left out) and single files. */
const INPUT_DIRS = ['protocol/src', 'hop/src', 'edge-agent/src', 'relay/src', 'scripts/package', 'packaging'];
const INPUT_FILES = [
  'package-lock.json',
  'protocol/package.json',
  'hop/package.json',
  'edge-agent/package.json',
  'relay/package.json',
  'examples/agent.yaml',
  'examples/relay.yaml',
  'examples/schema/agent.schema.json',
  'examples/schema/relay.schema.json',
  'docs/configuration.md',
];
/** Cache entries nobody used for this long are removed (each is ~150 MB). */
const KEEP_UNUSED_MS = 3 * 3600_000;
/** How long a caller waits for another's build before giving up. */
const WAIT_MS = 15 * 60_000;

/** What `unpackedPackage` answers: the unpacked folder and the tarball it came from. */
export interface UnpackedPackage {
  dir: string;
  tarball: string;
  /** Whether this call built it (false: a cached copy). */
  built: boolean;
  ms: number;
}

/** sha256 over the package's inputs: the cache key. */
export function inputKey(root = ROOT): string {
  const h = createHash('sha256');
  h.update(`${process.version} ${process.arch} ${process.execPath}\n`);
  const files: string[] = [...INPUT_FILES];
  const walk = (d: string) => {
    for (const e of readdirSync(join(root, d), { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile() && !/\.test\.tsx?$/.test(e.name)) files.push(p);
    }
  };
  for (const d of INPUT_DIRS) if (existsSync(join(root, d))) walk(d);
  for (const f of files.sort()) {
    const p = join(root, f);
    if (!existsSync(p)) continue;
    h.update(`${f}\n`);
    h.update(readFileSync(p));
  }
  return h.digest('hex').slice(0, 16);
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Removes cache entries other than `keep` that nobody used recently. */
function prune(cache: string, keep: string): void {
  for (const e of readdirSync(cache)) {
    if (e === keep || e.endsWith('.lock')) continue;
    // A build in progress (another run's staging folder) counts as used since it was made.
    const used = e.includes('.tmp-') ? join(cache, e) : join(cache, e, '.used');
    const at = existsSync(used) ? statSync(used).mtimeMs : 0;
    if (Date.now() - at > KEEP_UNUSED_MS) rmSync(join(cache, e), { recursive: true, force: true });
  }
}

/**
 * The package for this checkout, built (`buildPackage`, this machine's CPU) and unpacked with `tar xzf`
 * unless a copy from the same inputs is cached. `log` hears what it does.
 */
export async function unpackedPackage(
  opts: { root?: string; cacheDir?: string; log?: (m: string) => void } = {},
): Promise<UnpackedPackage> {
  const t0 = Date.now();
  const root = opts.root ?? ROOT;
  const cache = opts.cacheDir ?? join(root, 'node_modules/.cache/driftline-edge');
  const log = opts.log ?? (() => {});
  mkdirSync(cache, { recursive: true });
  const key = inputKey(root);
  const entry = join(cache, key);
  const done = () => {
    writeFileSync(join(entry, '.used'), '');
    utimesSync(join(entry, '.used'), new Date(), new Date());
    const tarball = readFileSync(join(entry, 'TARBALL'), 'utf8').trim();
    return { dir: join(entry, 'unpacked'), tarball: join(entry, tarball) };
  };
  if (existsSync(join(entry, 'TARBALL'))) return { ...done(), built: false, ms: Date.now() - t0 };

  const lock = join(cache, `${key}.lock`);
  const end = Date.now() + WAIT_MS;
  for (let i = 0; ; i++) {
    try {
      mkdirSync(lock);
      writeFileSync(join(lock, 'pid'), String(process.pid));
      break;
    } catch {
      let pid = 0; // 0: the holder has not written its pid yet
      try {
        pid = Number(readFileSync(join(lock, 'pid'), 'utf8'));
      } catch {}
      if (existsSync(join(entry, 'TARBALL'))) return { ...done(), built: false, ms: Date.now() - t0 };
      if (pid > 0 && !alive(pid)) rmSync(lock, { recursive: true, force: true });
      else if (Date.now() > end || i > 10_000)
        throw new Error(
          `waited ${WAIT_MS / 1000} s for the package build holding ${lock}; remove it if stale`,
        );
      else await new Promise((r) => setTimeout(r, 500));
    }
  }
  try {
    if (existsSync(join(entry, 'TARBALL'))) return { ...done(), built: false, ms: Date.now() - t0 };
    const target = TARGETS.find((t) => t.nodeArch === process.arch);
    if (!target) throw new Error(`no package target for ${process.arch}`);
    log(`building the offline package (inputs ${key})`);
    const staging = join(cache, `${key}.tmp-${process.pid}`);
    rmSync(staging, { recursive: true, force: true });
    const r = await buildPackage(target, staging, root);
    mkdirSync(join(staging, 'unpacked'));
    const untar = spawnSync('tar', ['xzf', r.tarball, '-C', join(staging, 'unpacked')], { encoding: 'utf8' });
    if (untar.status !== 0) throw new Error(`tar xzf ${r.tarball}: ${untar.stderr || untar.error?.message}`);
    writeFileSync(join(staging, 'TARBALL'), `${relative(staging, r.tarball)}\n`);
    renameSync(staging, entry);
    prune(cache, key);
    log(`offline package ${r.name} unpacked in ${Math.round((Date.now() - t0) / 1000)} s`);
    return { ...done(), built: true, ms: Date.now() - t0 };
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}
