import { spawn } from 'node:child_process';

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/**
 * Test support (`@driftline/hop/testing`): starts `node <bin> <args>` in `cwd` under a supervisor process
 * that reads its stderr (a pipe, or a file with `stderr: 'file'`), with `DRIFTLINE_EXIT_WITH_PARENT=1` (docs/operations.md, "Under a supervisor of
 * your own"); once the program logs `ready`, SIGKILLs the supervisor and waits, at most `withinMs`, for
 * the program to stop. Answers whether it stopped; one still running then is killed.
 */
export async function stopsWithSupervisor(
  bin: string,
  args: readonly string[],
  cwd: string,
  ready: RegExp,
  withinMs = 30_000,
  /** `file`: the program's stderr goes to a file the supervisor reads, not to a pipe of its own. */
  stderr: 'pipe' | 'file' = 'pipe',
): Promise<boolean> {
  const log = JSON.stringify(`${cwd}/.supervised-stderr.log`);
  const supervisor = spawn(
    process.execPath,
    [
      '-e',
      `const { spawn } = require('node:child_process');
       const c = spawn(process.execPath, ${JSON.stringify([bin, ...args])}, {
         cwd: ${JSON.stringify(cwd)},
         env: { ...process.env, LOG_LEVEL: 'info', DRIFTLINE_EXIT_WITH_PARENT: '1' },
         stdio: ['ignore', 'ignore', ${stderr === 'pipe' ? "'pipe'" : `require('node:fs').openSync(${log}, 'w')`}],
       });
       const ready = new RegExp(${JSON.stringify(ready.source)});
       if (c.stderr) c.stderr.on('data', (d) => { if (ready.test(String(d))) console.log(c.pid); });
       else { const t = setInterval(() => { let text = ''; try { text = require('node:fs').readFileSync(${log}, 'utf8'); } catch {} if (ready.test(text)) { clearInterval(t); console.log(c.pid); } }, 100); }
       setInterval(() => {}, 1000);`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const pid = await new Promise<number>((resolve, reject) => {
    supervisor.stdout.once('data', (d: Buffer) => resolve(Number(String(d).trim())));
    supervisor.once('exit', (c) =>
      reject(new Error(`the supervisor exited ${c} before ${ready} was logged`)),
    );
  });
  if (!alive(pid)) throw new Error(`${bin} exited before its supervisor was killed`);
  supervisor.kill('SIGKILL');
  // bounded: turns of 100 ms until withinMs
  for (let t = 0; t < withinMs && alive(pid); t += 100) await new Promise((r) => setTimeout(r, 100));
  const orphan = alive(pid);
  if (orphan) process.kill(pid, 'SIGKILL');
  return !orphan;
}
