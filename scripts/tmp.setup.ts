/**
 * Vitest's global set-up for the whole run: one temporary folder for everything the run's tests and the
 * programs they start put in the system's temporary folder (TMPDIR, which os.tmpdir() and mktemp read),
 * removed when the run ends. A test that forgets its folder, or a process killed before its clean-up,
 * then costs nothing after the run: before, each run left a few GB under /tmp (PostgreSQL clusters among
 * them), and a machine that ran the suite all day filled its disk (docs/decisions/442-test-temp-folder.md).
 * DRIFTLINE_KEEP_TEST_TMP=1 keeps it, to read what a failed test left.
 */
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export default function setup(): () => void {
  // Each workspace's config names this set-up too, so that `cd hub && npx vitest run` gets a folder of its
  // own; in a whole run the root config's comes first and the projects' find it in place.
  const held = process.env.DRIFTLINE_TEST_TMPDIR;
  if (held && process.env.TMPDIR === held && existsSync(held)) return () => {};
  const parent = tmpdir();
  const dir = mkdtempSync(join(parent, 'driftline-test-'));
  process.env.DRIFTLINE_TEST_TMPDIR = dir;
  // PostgreSQL's clusters run as `postgres` when the run is root (hub/test/postgres.ts): it must reach
  // its own folder inside this one.
  chmodSync(dir, 0o755);
  process.env.TMPDIR = dir;
  return () => {
    process.env.TMPDIR = parent;
    delete process.env.DRIFTLINE_TEST_TMPDIR;
    if (process.env.DRIFTLINE_KEEP_TEST_TMP === '1') {
      console.log(`test temp folder kept: ${dir}`);
      return;
    }
    rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  };
}
