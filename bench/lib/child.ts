import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');

export interface ChildResult {
  stdout: string;
  peakRssMb: number | null;
}

// Ctrl-C or a TERM ends the bench through process.exit, so each running part's group and folder go too.
for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => process.exit(130));

/**
 * Stops the PostgreSQL clusters left running under `dir` (a part killed at its time limit never stops its
 * own), then removes `dir`.
 */
function removePartTmp(dir: string): void {
  const stack = [dir];
  for (let depth = 0; stack.length > 0 && depth < 10_000; depth++) {
    const d = stack.pop() as string;
    let names: string[];
    try {
      names = readdirSync(d);
    } catch {
      continue;
    }
    if (names.includes('postmaster.pid')) {
      const pid = Number(readFileSync(join(d, 'postmaster.pid'), 'utf8').split('\n')[0]);
      try {
        if (pid > 1) process.kill(pid, 'SIGQUIT');
      } catch {}
      continue;
    }
    for (const n of names) if (!n.startsWith('.')) stack.push(join(d, n));
  }
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
}

/**
 * Runs a TypeScript file under tsx, inherits stderr, returns stdout and the child's peak RSS (VmHWM). The
 * child's temporary folder (TMPDIR) is one of its own, removed when it ends however it ends: a part killed
 * at its limit left its fleet and PostgreSQL cluster (2 GB at 1,000 × 200) behind before.
 */
export function runTs(file: string, args: string[], timeoutMs: number): Promise<ChildResult> {
  const tmp = mkdtempSync(join(tmpdir(), 'driftline-bench-part-'));
  chmodSync(tmp, 0o755); // a PostgreSQL cluster inside runs as `postgres` when the bench runs as root
  return new Promise<ChildResult>((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', file, ...args], {
      cwd: root,
      env: { ...process.env, TMPDIR: tmp },
      stdio: ['ignore', 'pipe', 'inherit'],
      // its own process group, so a part killed at its limit takes the programs it started with it
      detached: true,
    });
    const stopGroup = (): void => {
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {}
    };
    const onExit = (): void => {
      stopGroup();
      removePartTmp(tmp);
    };
    process.once('exit', onExit);
    let stdout = '';
    let peak: number | null = null;
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    const poll = setInterval(() => {
      try {
        const m = readFileSync(`/proc/${child.pid}/status`, 'utf8').match(/VmHWM:\s+(\d+) kB/);
        if (m) peak = Math.max(peak ?? 0, Math.round(Number(m[1]) / 1024));
      } catch {}
    }, 100);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      stopGroup();
    }, timeoutMs);
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      clearInterval(poll);
      process.removeListener('exit', onExit);
      if (timedOut)
        reject(new Error(`${file} did not finish within ${Math.round(timeoutMs / 1000)} s (killed)`));
      else if (code === 0) resolve({ stdout, peakRssMb: peak });
      else reject(new Error(`${file} exited with ${signal ?? `code ${code}`}`));
    });
  }).finally(() => removePartTmp(tmp));
}

export const lastJsonLine = (out: string): Record<string, unknown> => {
  const line = out
    .trim()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .at(-1);
  if (!line) throw new Error('the part printed no JSON');
  return JSON.parse(line) as Record<string, unknown>;
};
