/** What to run: one program, its arguments, directory and environment, with limits. */
export interface ProcessSpec {
  command: string;
  args: readonly string[];
  cwd: string;
  env: Readonly<Record<string, string>>;
  /** After this, SIGTERM to the whole process group; after `killGraceMs` more, SIGKILL. */
  timeoutMs: number;
  killGraceMs: number;
  /** stdout beyond this is not kept: the process is killed and `stdoutOverflow` set. */
  maxStdoutBytes: number;
  /** Only the last `maxStderrBytes` of stderr are kept. */
  maxStderrBytes: number;
}

export interface ProcessResult {
  /** null when killed by a signal or never started. */
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  stdout: string;
  stdoutOverflow: boolean;
  stderr: string;
  /** Set when the program could not be started (`ENOENT`, `EACCES`, …). */
  spawnError?: string;
}

/**
 * Runs external programs (terraform, tofu, wrappers) with bounded time and memory. Adapter:
 * `NodeProcessRunner`, held to `runProcessRunnerContract` (test/processRunnerContract.ts) with real
 * programs; no memory adapter (docs/decisions/120-agent-ledger.md).
 */
export interface ProcessRunner {
  run(spec: ProcessSpec): Promise<ProcessResult>;
}
