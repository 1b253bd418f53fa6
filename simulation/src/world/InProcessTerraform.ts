import { statSync } from 'node:fs';
import { basename } from 'node:path';
import type { ProcessResult, ProcessRunner, ProcessSpec } from '@driftline/edge-agent';
import type { Outcome } from '../core/terraform/run.js';
import { fakeTerraform } from '../terraform/fakeTerraformMain.js';

/** The programs that run in process: the fake terraform under either name (`c.tool`). */
const PROGRAMS = new Set(['terraform', 'tofu']);

/**
 * The edge agent's `ProcessRunner` for a world (docs/decisions/540-deterministic-world.md): `terraform` and
 * `tofu` (any path, `simulation/bin/terraform` among them) are the fake terraform run in this process
 * (`fakeTerraform`), on the global timers, so a plan cycle (`version`, `init`, `plan`, `show -json`,
 * `apply`) takes the world's virtual time and only a step's `durationMs` of it. Held to what
 * `NodeProcessRunner` answers (edge-agent/test/processRunnerContract.ts):
 * - past `timeoutMs` the run is ended as by SIGTERM (`timedOut`, no exit code, nothing printed, no plan
 *   file written: the fake's wait is aborted);
 * - stdout past `maxStdoutBytes` is not kept, as by the SIGKILL of the real runner (`stdoutOverflow`);
 * - only the last `maxStderrBytes` of stderr are kept;
 * - any other program, or a `cwd` that is not a directory, cannot be started (`spawnError` `ENOENT`, which
 *   the agent reports as `tool-not-found`), as a program missing from the machine.
 * A fake that throws ends as node ends on an uncaught error: exit code 1, the stack on stderr.
 */
export class InProcessTerraform implements ProcessRunner {
  async run(spec: ProcessSpec): Promise<ProcessResult> {
    if (!PROGRAMS.has(basename(spec.command))) return notStarted('ENOENT');
    const cwd = statSync(spec.cwd, { throwIfNoEntry: false });
    if (!cwd) return notStarted('ENOENT');
    if (!cwd.isDirectory()) return notStarted('ENOTDIR');

    const kill = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    // Armed before the fake starts: at the same instant as the fake's own wait, the timeout comes first.
    const timeout = new Promise<'timeout'>((done) => {
      timer = setTimeout(() => done('timeout'), spec.timeoutMs);
    });
    const ran = fakeTerraform(spec.args, { ...spec.env }, spec.cwd, kill.signal).catch(crashed);
    const first = await Promise.race([ran, timeout]);
    clearTimeout(timer);
    if (first === 'timeout') {
      kill.abort();
      return {
        exitCode: null,
        signal: 'SIGTERM',
        timedOut: true,
        stdout: '',
        stdoutOverflow: false,
        stderr: '',
      };
    }
    const stderr = lastBytes(first.stderr, spec.maxStderrBytes);
    if (Buffer.byteLength(first.stdout) > spec.maxStdoutBytes)
      return { exitCode: null, signal: 'SIGKILL', timedOut: false, stdout: '', stdoutOverflow: true, stderr };
    return {
      exitCode: first.exitCode,
      signal: null,
      timedOut: false,
      stdout: first.stdout,
      stdoutOverflow: false,
      stderr,
    };
  }
}

const notStarted = (code: string): ProcessResult => ({
  exitCode: null,
  signal: null,
  timedOut: false,
  stdout: '',
  stdoutOverflow: false,
  stderr: '',
  spawnError: code,
});

/** What node prints for an uncaught error, as near as in process: the stack, exit code 1. */
const crashed = (e: unknown): Outcome => ({
  exitCode: 1,
  stdout: '',
  stderr: `${e instanceof Error ? (e.stack ?? String(e)) : String(e)}\n`,
});

/** The last `max` bytes of `text`, cut as the real runner cuts them (bytes, not characters). */
function lastBytes(text: string, max: number): string {
  const b = Buffer.from(text, 'utf8');
  return b.length > max ? b.subarray(b.length - max).toString('utf8') : text;
}
