import { spawn } from 'node:child_process';
import type { ProcessResult, ProcessRunner, ProcessSpec } from '../../ports/ProcessRunner.js';

/** Kills the whole process group: wrappers and terraform's provider plugins go too. */
function killGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // the group is already gone
  }
}

/** `ProcessRunner` over `child_process.spawn`, each run in its own process group. */
export class NodeProcessRunner implements ProcessRunner {
  run(spec: ProcessSpec): Promise<ProcessResult> {
    return new Promise((resolve) => {
      const out: Buffer[] = [];
      let outBytes = 0;
      let stdoutOverflow = false;
      let err = Buffer.alloc(0);
      let timedOut = false;
      let spawnError: string | undefined;
      let graceTimer: NodeJS.Timeout | undefined;
      const child = spawn(spec.command, [...spec.args], {
        cwd: spec.cwd,
        env: { ...spec.env },
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
      });
      const stop = () => {
        killGroup(child.pid, 'SIGTERM');
        graceTimer = setTimeout(() => killGroup(child.pid, 'SIGKILL'), spec.killGraceMs);
      };
      const timer = setTimeout(() => {
        timedOut = true;
        stop();
      }, spec.timeoutMs);
      child.stdout.on('data', (chunk: Buffer) => {
        if (stdoutOverflow) return;
        outBytes += chunk.length;
        if (outBytes > spec.maxStdoutBytes) {
          stdoutOverflow = true;
          out.length = 0;
          killGroup(child.pid, 'SIGKILL');
          return;
        }
        out.push(chunk);
      });
      child.stderr.on('data', (chunk: Buffer) => {
        err = Buffer.concat([err, chunk]);
        if (err.length > spec.maxStderrBytes) err = err.subarray(err.length - spec.maxStderrBytes);
      });
      child.on('error', (e: NodeJS.ErrnoException) => {
        spawnError = e.code ?? e.message;
      });
      child.on('close', (code, signal) => {
        clearTimeout(timer);
        if (graceTimer) clearTimeout(graceTimer);
        resolve({
          exitCode: spawnError ? null : code,
          signal,
          timedOut,
          stdout: Buffer.concat(out).toString('utf8'),
          stdoutOverflow,
          stderr: err.toString('utf8'),
          ...(spawnError ? { spawnError } : {}),
        });
      });
    });
  }
}
