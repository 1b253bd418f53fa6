/**
 * Global set-up of the Compose project (vitest.compose.config.ts): starts building the images
 * (`scripts/docker/up.sh build`) in the background as the run begins, so that the Compose test, which runs
 * alone after every other file (docs/decisions/531-compose-test-runs-alone.md), finds them built instead
 * of spending its own minutes on it. The build runs beside the rest of the suite as it always did; the
 * ten containers do not. The test waits for it (`DRIFTLINE_COMPOSE_PREBUILD`: its pid and log) and then runs
 * up.sh, whose own build is then a cache hit. Nothing starts where the test would skip (no engine, or
 * `DRIFTLINE_COMPOSE_TEST=0`); the build is stopped if the run ends first.
 */
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, openSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../src/topology/programs.js';

export default function setup(): (() => void) | undefined {
  if (process.env.DRIFTLINE_COMPOSE_TEST === '0' || process.env.DRIFTLINE_COMPOSE_PREBUILD) return;
  const info = spawnSync('docker', ['info', '--format', '{{.ServerVersion}}'], { timeout: 20_000 });
  if (info.error || info.status !== 0) return;
  const log = join(tmpdir(), 'compose-image-build.log');
  const out = openSync(log, 'w');
  const child = spawn(join(ROOT, 'scripts/docker/up.sh'), ['build'], {
    cwd: ROOT,
    detached: true,
    stdio: ['ignore', out, out],
  });
  closeSync(out); // the child holds its own copy
  // its end, for the test (in another process) to read: a file beside the log with its exit code
  child.on('exit', (code, signal) => writeFileSync(`${log}.exit`, `${code ?? signal}\n`));
  child.unref();
  if (child.pid === undefined) return;
  process.env.DRIFTLINE_COMPOSE_PREBUILD = `${child.pid}:${log}`;
  const pid = child.pid;
  return () => {
    delete process.env.DRIFTLINE_COMPOSE_PREBUILD;
    try {
      process.kill(-pid, 'SIGTERM'); // its process group: up.sh and the docker build it runs
    } catch {
      // done already
    }
  };
}
