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
  const script = `const { spawn } = require('node:child_process');
       const c = spawn(process.execPath, ${JSON.stringify([bin, ...args])}, {
         cwd: ${JSON.stringify(cwd)},
         env: { ...process.env, LOG_LEVEL: 'info', DRIFTLINE_EXIT_WITH_PARENT: '1' },
         stdio: ['ignore', 'ignore', ${stderr === 'pipe' ? "'pipe'" : `require('node:fs').openSync(${log}, 'w')`}],
       });
       c.on('exit', (code) => { console.log('exited ' + code); process.exit(1); });
       const ready = new RegExp(${JSON.stringify(ready.source)});
       const say = () => console.log(process.pid + ' ' + c.pid);
       if (c.stderr) c.stderr.on('data', (d) => { if (ready.test(String(d))) say(); });
       else { const t = setInterval(() => { let text = ''; try { text = require('node:fs').readFileSync(${log}, 'utf8'); } catch {} if (ready.test(text)) { clearInterval(t); say(); } }, 100); }
       setInterval(() => {}, 1000);`;
  // The supervisor's own parent is a shell that never waits (it becomes `sleep`): a killed supervisor
  // stays a zombie, as under a parent slow to reap it, and a zombie still answers signal 0.
  const reaper = spawn('sh', ['-c', '"$0" -e "$1" & exec sleep 600', process.execPath, script], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let supervisor = 0;
  let pid = 0;
  try {
    [supervisor, pid] = await new Promise<[number, number]>((resolve, reject) => {
      reaper.stdout.once('data', (d: Buffer) => {
        const said = String(d).trim();
        if (said.startsWith('exited')) reject(new Error(`${bin} ${said} before ${ready} was logged`));
        else resolve([Number(said.split(' ')[0]), Number(said.split(' ')[1])]);
      });
      reaper.once('exit', (c) => reject(new Error(`the supervisor's shell exited ${c}`)));
    });
  } catch (e) {
    reaper.kill('SIGKILL');
    throw e;
  }
  if (!alive(pid)) {
    reaper.kill('SIGKILL');
    throw new Error(`${bin} exited before its supervisor was killed`);
  }
  process.kill(supervisor, 'SIGKILL');
  // bounded: turns of 100 ms until withinMs
  for (let t = 0; t < withinMs && alive(pid); t += 100) await new Promise((r) => setTimeout(r, 100));
  const orphan = alive(pid);
  if (orphan) process.kill(pid, 'SIGKILL');
  reaper.kill('SIGKILL');
  return !orphan;
}
