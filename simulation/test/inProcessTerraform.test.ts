import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ProcessSpec } from '@driftline/edge-agent';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { InProcessTerraform } from '../src/world/InProcessTerraform.js';

const BIN = new URL('../bin/terraform', import.meta.url).pathname;
const root = mkdtempSync(join(tmpdir(), 'in-process-tf-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** The whole environment, as the agent hands it to the tool (PATH and all). */
const ENV: Record<string, string> = {
  ...(Object.fromEntries(Object.entries(process.env).filter(([, v]) => v !== undefined)) as Record<
    string,
    string
  >),
  TF_IN_AUTOMATION: '1',
  TF_INPUT: '0',
  TF_CLI_CONFIG_FILE: '',
};

/** `<root>/<name>/stack` with `scenario` as its fake-terraform.yaml; returns `<root>/<name>`. */
function site(name: string, scenario: string): string {
  const dir = join(root, name);
  mkdirSync(join(dir, 'stack'), { recursive: true });
  writeFileSync(join(dir, 'stack', 'fake-terraform.yaml'), scenario);
  writeFileSync(join(dir, 'stack', 'main.tf'), 'resource "null_resource" "x" {}\n');
  return dir;
}

const spec = (cwd: string, args: string[], over: Partial<ProcessSpec> = {}): ProcessSpec => ({
  command: 'terraform',
  args,
  cwd,
  env: ENV,
  timeoutMs: 60_000,
  killGraceMs: 10_000,
  maxStdoutBytes: 64 * 1024 * 1024,
  maxStderrBytes: 1024 * 1024,
  ...over,
});

/** The real program, as a child process. */
function child(cwd: string, args: string[]) {
  const r = spawnSync(BIN, args, { cwd, env: ENV, encoding: 'utf8', timeout: 30_000 });
  return { exitCode: r.status, stdout: r.stdout, stderr: r.stderr };
}

// The `component` is named: the two sites' directories differ, and the plan would otherwise take its name.
const SCENARIO =
  'component: network\nenvironment: prod\nseed: 3\nsteps:\n  - state: changes\n  - state: clean\n  - state: failed\n';

/** What the agent's plan cycle runs (runPlan, offlineInit), then the same from the parent with -chdir. */
const CYCLE: { cwd: 'stack' | '.'; args: string[] }[] = [
  { cwd: 'stack', args: ['version', '-json'] },
  { cwd: 'stack', args: ['version'] },
  { cwd: 'stack', args: ['init', '-input=false', '-no-color'] },
  ...[1, 2, 3].flatMap(() => [
    {
      cwd: 'stack' as const,
      args: [
        'plan',
        '-input=false',
        '-no-color',
        '-json',
        '-out=plan.bin',
        '-detailed-exitcode',
        '-lock-timeout=0s',
      ],
    },
    { cwd: 'stack' as const, args: ['show', '-json', '-no-color', 'plan.bin'] },
  ]),
  { cwd: 'stack', args: ['plan', '-out=plan.bin', '-detailed-exitcode'] },
  { cwd: '.', args: ['-chdir=stack', 'show', '-json', 'plan.bin'] },
  { cwd: 'stack', args: ['frobnicate'] },
];

describe('InProcessTerraform', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('answers a plan cycle exactly as the fake terraform program does', async () => {
    const inProcess = site('in-process', SCENARIO);
    const asChild = site('child', SCENARIO);
    const runner = new InProcessTerraform();
    const exits: (number | null)[] = [];
    for (const step of CYCLE) {
      const a = await runner.run(spec(join(inProcess, step.cwd), step.args));
      const b = child(join(asChild, step.cwd), step.args);
      expect({ step: step.args, ...a }).toEqual({
        step: step.args,
        ...b,
        signal: null,
        timedOut: false,
        stdoutOverflow: false,
      });
      exits.push(a.exitCode);
    }
    // The scenario went through: changes (2), clean (0), failed (1), and on from the start again.
    expect(exits).toEqual([0, 0, 0, 2, 0, 0, 0, 1, 0, 2, 0, 1]);
    const show = await runner.run(spec(join(inProcess, 'stack'), ['show', '-json', 'plan.bin']));
    expect(JSON.parse(show.stdout)).toMatchObject({ variables: { environment: { value: 'prod' } } });
  }, 60_000);

  it('starts no other program: it is missing, as on a machine without it', async () => {
    const dir = site('other', SCENARIO);
    const runner = new InProcessTerraform();
    const missing = {
      exitCode: null,
      signal: null,
      timedOut: false,
      stdout: '',
      stdoutOverflow: false,
      stderr: '',
      spawnError: 'ENOENT',
    };
    expect(await runner.run(spec(dir, ['plan'], { command: '/usr/bin/git' }))).toEqual(missing);
    expect(await runner.run(spec(dir, ['plan'], { command: 'terraform-wrapper.sh' }))).toEqual(missing);
    expect(await runner.run(spec(join(dir, 'no-such-dir'), ['version']))).toEqual(missing);
    // Any path to terraform or tofu is the fake.
    for (const command of [BIN, '/usr/local/bin/tofu', 'tofu'])
      expect(await runner.run(spec(join(dir, 'stack'), ['version'], { command }))).toMatchObject({
        exitCode: 0,
        stdout: expect.stringMatching(/^Terraform v1\.9\.8\n/),
      });
  });

  it("takes a step's durationMs on the global timers, and ends a run past its timeout as SIGTERM does", async () => {
    const dir = join(
      site(
        'slow',
        'component: network\nsteps:\n  - state: changes\n    durationMs: 5000\n  - state: clean\n    durationMs: 60000\n',
      ),
      'stack',
    );
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const runner = new InProcessTerraform();
    const plan = ['plan', '-out=plan.bin', '-detailed-exitcode'];

    let done = false;
    const quick = runner.run(spec(dir, plan, { timeoutMs: 10_000 })).finally(() => {
      done = true;
    });
    await vi.advanceTimersByTimeAsync(4_999);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await quick).toMatchObject({ exitCode: 2, timedOut: false });
    expect(vi.getTimerCount()).toBe(0);
    rmSync(join(dir, 'plan.bin'));

    const slow = runner.run(spec(dir, plan, { timeoutMs: 10_000 }));
    await vi.advanceTimersByTimeAsync(10_000);
    expect(await slow).toEqual({
      exitCode: null,
      signal: 'SIGTERM',
      timedOut: true,
      stdout: '',
      stdoutOverflow: false,
      stderr: '',
    });
    // Killed: no timer of it is left, and no plan file is written later.
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(120_000);
    expect(existsSync(join(dir, 'plan.bin'))).toBe(false);
  });

  it('keeps no stdout past its cap and only the last bytes of stderr, as the real runner', async () => {
    const inProcess = join(site('caps', SCENARIO), 'stack');
    const asChild = join(site('caps-child', SCENARIO), 'stack');
    const runner = new InProcessTerraform();
    const plan = ['plan', '-out=plan.bin', '-detailed-exitcode'];
    for (const [i, expected] of [2, 0].entries()) {
      const r = await runner.run(spec(inProcess, plan));
      expect([i, r.exitCode]).toEqual([i, expected]);
      child(asChild, plan);
    }
    const show = await runner.run(spec(inProcess, ['show', '-json', 'plan.bin'], { maxStdoutBytes: 100 }));
    expect(show).toMatchObject({ stdout: '', stdoutOverflow: true, exitCode: null, signal: 'SIGKILL' });
    const failed = await runner.run(spec(inProcess, plan, { maxStderrBytes: 40 }));
    const whole = child(asChild, plan);
    expect(whole.exitCode).toBe(1);
    expect(failed.exitCode).toBe(1);
    // Cut in bytes, as the real runner cuts: a character split at the cut decodes as U+FFFD there too.
    const bytes = Buffer.from(whole.stderr);
    expect(bytes.length).toBeGreaterThan(40);
    expect(failed.stderr).toBe(bytes.subarray(bytes.length - 40).toString('utf8'));
  });
});
