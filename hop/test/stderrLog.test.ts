import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { expect, it, onTestFinished } from 'vitest';

/**
 * A daemon whose stderr's reader has gone (a supervisor killed outright) still exits when it logs
 * (src/lock/stderrLog.ts): the lines are dropped, none is left for an exit flush that retries for good.
 */
it('logs to a stderr whose reader is gone and still exits 0', { timeout: 30_000 }, async () => {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(import.meta.dirname, 'fixtures/logAfterReaderGone.ts')],
    {
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  );
  // its waits are bounded by the test's timeout; a child that never exits is killed when the test ends
  onTestFinished(() => {
    child.kill('SIGKILL');
  });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  // what the child logged on stderr before its reader goes: read until its `started` line has come, which
  // may be after stdout's `ready` (two pipes, no order between them)
  let first = '';
  const started = new Promise<void>((resolve) => {
    const read = (d: Buffer) => {
      first += String(d);
      if (!first.includes('"msg":"started"')) return;
      child.stderr.off('data', read);
      resolve();
    };
    child.stderr.on('data', read);
  });
  const ready = new Promise((r) => child.stdout.once('data', r));
  await Promise.race([
    Promise.all([started, ready]),
    exited.then((code) => {
      throw new Error(
        `the child exited (${code}) before it logged "started" on stderr and "ready" on stdout`,
      );
    }),
  ]);
  child.stderr.destroy(); // the reader goes, as when a supervisor holding the pipe is SIGKILLed
  child.stdin.write('go\n');
  const code = await exited;
  expect(first).toContain('"msg":"started"');
  expect(code).toBe(0);
});
