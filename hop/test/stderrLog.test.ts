import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { expect, it } from 'vitest';

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
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  let first = '';
  child.stderr.once('data', (d: Buffer) => {
    first = String(d);
  });
  await new Promise((r) => child.stdout.once('data', r));
  child.stderr.destroy(); // the reader goes, as when a supervisor holding the pipe is SIGKILLed
  child.stdin.write('go\n');
  // bounded: 10 s, then the child is killed and the test fails
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  const code = await exited;
  clearTimeout(timer);
  expect(first).toContain('"msg":"started"');
  expect(code).toBe(0);
});
