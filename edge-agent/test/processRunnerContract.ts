import { realpathSync, rmSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import type { ProcessResult, ProcessRunner, ProcessSpec } from '../src/ports/ProcessRunner.js';
import { tempDir } from './helpers/storeFixtures.js';

/** A process that would outlive every test: only a kill ends it before an hour. */
const HANG = 'setTimeout(() => {}, 3_600_000);';

/**
 * Runs `spec` on `runner` until a run whose output shows its program got ready before its timeout, and returns
 * that run. A cold `node` on a loaded machine can take seconds to start, and a timeout that fires first tests
 * nothing (the SIGTERM handler, or the grandchild, not there yet); the port gives no output before the end, so
 * readiness is read from each run's stdout. Bounded in count (4 runs, the timeout doubled each time, 2 s to
 * 16 s from `spec.timeoutMs` 2 s), failing loudly; the test's own timeout bounds it in time.
 */
async function runOnceReady(
  runner: ProcessRunner,
  spec: ProcessSpec,
  ready: (stdout: string) => boolean,
  what: string,
): Promise<ProcessResult> {
  let timeoutMs = spec.timeoutMs;
  const seen: string[] = [];
  for (let i = 0; i < 4; i++, timeoutMs *= 2) {
    const r = await runner.run({ ...spec, timeoutMs });
    if (ready(r.stdout)) return r;
    seen.push(`${timeoutMs} ms: ${JSON.stringify(r.stdout)}`);
  }
  throw new Error(`never reached: ${what} before the timeout (stdout of each run: ${seen.join('; ')})`);
}

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
      // 'ready' says the handler was set before the timeout's SIGTERM; only such a run tests the grace.
      const r = await runOnceReady(
        setup(),
        node(`process.on('SIGTERM', () => console.log('ignored')); console.log('ready'); ${HANG}`, {
          timeoutMs: 2_000,
          killGraceMs: 200,
        }),
        (out) => out.startsWith('ready\n'),
        'the child set its SIGTERM handler',
      );
      expect(r).toMatchObject({
        exitCode: null,
        signal: 'SIGKILL',
        timedOut: true,
        stdout: 'ready\nignored\n',
      });
    }, 90_000);

    it('ends the whole process group: a child holding the output open does not keep the run going', async () => {
      // The grandchild shares stdout; the run can only finish once it is gone too. Each says it is running
      // ('started', 'grandchild'): only a run where both were up before the timeout tests the group.
      const grandchild = `console.log('grandchild'); ${HANG}`;
      const child = `require('node:child_process').spawn(process.execPath, ['-e', ${JSON.stringify(grandchild)}], { stdio: 'inherit' });`;
      const lines = (out: string) => out.split('\n').filter(Boolean).sort();
      const r = await runOnceReady(
        setup(),
        node(`${child} console.log('started'); ${HANG}`, { timeoutMs: 2_000 }),
        (out) => lines(out).length === 2,
        'the child and its grandchild both running',
      );
      expect(r).toMatchObject({ timedOut: true });
      expect(lines(r.stdout)).toEqual(['grandchild', 'started']);
    }, 90_000);

    it('reports a program that cannot be started, with no exit code', async () => {
      const r = await setup().run({ ...node(''), command: '/nonexistent/terraform' });
      expect(r).toMatchObject({ exitCode: null, spawnError: 'ENOENT', timedOut: false });
    });
  });
}
