import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');

export interface ChildResult {
  stdout: string;
  peakRssMb: number | null;
}

/** Runs a TypeScript file under tsx, inherits stderr, returns stdout and the child's peak RSS (VmHWM). */
export function runTs(file: string, args: string[], timeoutMs: number): Promise<ChildResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', file, ...args], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
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
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${file} did not finish within ${Math.round(timeoutMs / 1000)} s (killed)`));
    }, timeoutMs);
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      clearInterval(poll);
      if (code === 0) resolve({ stdout, peakRssMb: peak });
      else reject(new Error(`${file} exited with ${signal ?? `code ${code}`}`));
    });
  });
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
