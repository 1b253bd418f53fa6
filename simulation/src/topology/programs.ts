import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The Driftline programs this simulation starts (never imported: DESIGN, Parts). */
export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const BINS = {
  hub: `${ROOT}hub/bin/hub.js`,
  relay: `${ROOT}relay/bin/relay.js`,
  agent: `${ROOT}edge-agent/bin/edge-agent.js`,
} as const;
export const FAKE_TERRAFORM_DIR = `${ROOT}simulation/bin`;

/** Runs a program to completion; resolves with stdout, rejects with its stderr on a non-zero exit. */
export function runProgram(
  program: keyof typeof BINS,
  args: string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<string> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [BINS[program], ...args], {
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
    p.on('error', reject);
    p.on('exit', (code) =>
      code === 0
        ? resolve(out)
        : reject(new Error(`${program} ${args.join(' ')} exited ${code}: ${err.trim()}`)),
    );
  });
}
