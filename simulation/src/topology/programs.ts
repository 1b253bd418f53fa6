import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The checkout: the nearest folder above this file holding `hub/bin/hub.js`, so that the same code finds
 * it from its source (simulation/src/topology) and compiled (simulation/dist; decision 440).
 */
function checkoutRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'hub', 'bin', 'hub.js'))) {
    const up = dirname(dir);
    if (up === dir)
      throw new Error('simulation: no Driftline checkout above this file (hub/bin/hub.js not found)');
    dir = up;
  }
  return `${dir}/`;
}

/** The Driftline programs this simulation starts (never imported: docs/architecture.md#components). */
export const ROOT = checkoutRoot();
export const BINS = {
  hub: `${ROOT}hub/bin/hub.js`,
  relay: `${ROOT}relay/bin/relay.js`,
  agent: `${ROOT}edge-agent/bin/edge-agent.js`,
} as const;
export const FAKE_TERRAFORM_DIR = `${ROOT}simulation/bin`;

/**
 * The unpacked offline package (`npm run package`) the agent and the relay run from when
 * `DRIFTLINE_EDGE_PACKAGE` names its folder (the end-to-end tests' global set-up does), else undefined:
 * they run from source, as `npm start` does. `DRIFTLINE_EDGE_PACKAGE=source` says so explicitly.
 */
export function edgePackage(): string | undefined {
  const dir = process.env.DRIFTLINE_EDGE_PACKAGE;
  return dir && dir !== 'source' ? dir : undefined;
}

/**
 * How to start `bin` (one of `BINS`): the package's launcher for the agent and the relay when
 * `edgePackage()` names one, else this Node on the source file.
 */
export function commandFor(bin: string): { cmd: string; args: string[] } {
  const pkg = edgePackage();
  if (pkg && bin === BINS.agent) return { cmd: join(pkg, 'bin', 'edge-agent'), args: [] };
  if (pkg && bin === BINS.relay) return { cmd: join(pkg, 'bin', 'relay'), args: [] };
  return { cmd: process.execPath, args: [bin] };
}

/**
 * How long one CLI run may take before it is killed (a set-up step is a second or two; minutes means it
 * hangs, and a set-up that waits on it forever says nothing about where: CI's Compose case once sat 800 s).
 */
export const PROGRAM_TIMEOUT_MS = 300_000;

/**
 * Runs a program to completion; resolves with stdout, rejects with its stderr on a non-zero exit, and
 * kills it (rejecting with what it printed) if it has not exited within `timeoutMs`.
 */
export function runProgram(
  program: keyof typeof BINS,
  args: string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<string> {
  return new Promise((resolve, reject) => {
    const c = commandFor(BINS[program]);
    const p = spawn(c.cmd, [...c.args, ...args], {
      cwd: opts.cwd,
      env: { ...process.env, LOG_LEVEL: 'warn', ...opts.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    p.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    p.stderr.on('data', (d: Buffer) => {
      err += d.toString();
    });
    const timeoutMs = opts.timeoutMs ?? PROGRAM_TIMEOUT_MS;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      p.kill('SIGKILL');
      // a process it started may still hold its output open, and 'close' waits for that too
      p.stdout.destroy();
      p.stderr.destroy();
    }, timeoutMs);
    p.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    // 'close', not 'exit': a quick program can exit before its stdout is read to the end.
    p.on('close', (code) => {
      clearTimeout(timer);
      if (timedOut)
        reject(
          new Error(
            `${program} ${args.join(' ')}: no exit within ${timeoutMs / 1000} s, killed; it printed: ${(err || out).trim().slice(-2000) || '(nothing)'}`,
          ),
        );
      else if (code === 0) resolve(out);
      else reject(new Error(`${program} ${args.join(' ')} exited ${code}: ${err.trim()}`));
    });
  });
}
