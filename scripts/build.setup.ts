/**
 * Vitest's global set-up for the whole run: the compiled programs (and the dashboard) rebuilt when a
 * source is newer than them, once per run, before any test starts a process, so a forgotten
 * `npm run build` is never what gets tested (docs/decisions/440-compiled-programs.md).
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export default function setup(): void {
  const script = fileURLToPath(new URL('./build.mjs', import.meta.url));
  const r = spawnSync(process.execPath, [script, '--if-stale'], { stdio: ['ignore', 'inherit', 'inherit'] });
  if (r.status !== 0)
    throw new Error(`npm run build failed (exit ${r.status}): the programs under test would be stale`);
}
