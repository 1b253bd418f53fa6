import { realpathSync, rmSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import type { ProcessRunner, ProcessSpec } from '../src/ports/ProcessRunner.js';
import { tempDir } from './helpers/storeFixtures.js';

/** A process that would outlive every test: only a kill ends it before an hour. */
const HANG = 'setTimeout(() => {}, 3_600_000);';

/**
 * What every `ProcessRunner` promises (ports/ProcessRunner.ts), with small real programs (`node -e`):
 * exit code and both streams kept apart, exactly the given environment and directory, stdout capped
 * (the process killed past it), the last bytes of stderr kept, a timeout that ends the whole process
 * group (SIGTERM, then SIGKILL after the grace), and a program that cannot start reported as such.
 */
export function runProcessRunnerContract(name: string, setup: () => ProcessRunner): void {
  describe(`ProcessRunner contract: ${name}`, () => {
    const dirs: string[] = [];
    afterEach(() => {
      for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
    });
    const node = (script: string, over: Partial<ProcessSpec> = {}): ProcessSpec => {
      const cwd = tempDir('driftline-proc-');
      dirs.push(cwd);
      return {
        command: process.execPath,
        args: ['-e', script],
        cwd,
        env: {},
        timeoutMs: 60_000,
        killGraceMs: 5_000,
        maxStdoutBytes: 1024 * 1024,
        maxStderrBytes: 1024 * 1024,
        ...over,
      };
    };

    it('keeps the exit code, stdout and stderr apart', async () => {
      const r = await setup().run(
        node('process.stdout.write("out"); process.stderr.write("err"); process.exitCode = 3;'),
      );
      expect(r).toEqual({
        exitCode: 3,
        signal: null,
        timedOut: false,
        stdout: 'out',
        stdoutOverflow: false,
        stderr: 'err',
      });
    });

    it('runs in the given directory with exactly the given environment', async () => {
      process.env.DRIFTLINE_CONTRACT_PARENT = 'leaks';
      try {
        const spec = node('console.log(JSON.stringify({ cwd: process.cwd(), env: process.env }))', {
          env: { TF_VAR_region: 'eu-north-1' },
        });
        const r = await setup().run(spec);
        expect(JSON.parse(r.stdout)).toEqual({
          cwd: realpathSync(spec.cwd),
          env: { TF_VAR_region: 'eu-north-1' },
        });
      } finally {
        delete process.env.DRIFTLINE_CONTRACT_PARENT;
      }
    });

    it('keeps no stdout past its cap: the process is killed and the overflow said', async () => {
      const r = await setup().run(
        node(`process.stdout.write('x'.repeat(64 * 1024)); ${HANG}`, { maxStdoutBytes: 1024 }),
      );
      expect(r).toMatchObject({ stdout: '', stdoutOverflow: true, exitCode: null, signal: 'SIGKILL' });
      expect(r.timedOut).toBe(false);
    });

    it('keeps only the last bytes of stderr', async () => {
      const r = await setup().run(
        node(`process.stderr.write('a'.repeat(10_000) + 'the end');`, { maxStderrBytes: 100 }),
      );
      expect(r.stderr).toHaveLength(100);
      expect(r.stderr.endsWith('aaathe end')).toBe(true);
      expect(r.exitCode).toBe(0);
    });

    it('ends a process past its time with SIGTERM, and says it timed out', async () => {
      const r = await setup().run(node(HANG, { timeoutMs: 200 }));
      expect(r).toMatchObject({ exitCode: null, signal: 'SIGTERM', timedOut: true });
    });

    it('kills with SIGKILL, after the grace, a process that ignores SIGTERM', async () => {
      const r = await setup().run(
        // The timeout leaves room for node to start and set its handler on a loaded machine.
        node(`process.on('SIGTERM', () => console.log('ignored')); ${HANG}`, {
          timeoutMs: 2_000,
          killGraceMs: 200,
        }),
      );
      expect(r).toMatchObject({ exitCode: null, signal: 'SIGKILL', timedOut: true, stdout: 'ignored\n' });
    }, 30_000);

    it('ends the whole process group: a child holding the output open does not keep the run going', async () => {
      // The grandchild shares stdout; the run can only finish once it is gone too.
      const child = `require('node:child_process').spawn(process.execPath, ['-e', ${JSON.stringify(HANG)}], { stdio: 'inherit' });`;
      const r = await setup().run(node(`${child} console.log('started'); ${HANG}`, { timeoutMs: 2_000 }));
      expect(r).toMatchObject({ timedOut: true, stdout: 'started\n' });
    }, 30_000);

    it('reports a program that cannot be started, with no exit code', async () => {
      const r = await setup().run({ ...node(''), command: '/nonexistent/terraform' });
      expect(r).toMatchObject({ exitCode: null, spawnError: 'ENOENT', timedOut: false });
    });
  });
}
