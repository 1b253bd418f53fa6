import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PlanSummarySchema } from '@driftline/protocol';
import { beforeAll, describe, expect, it } from 'vitest';
import { FsVarFiles } from '../src/adapters/fs/FsVarFiles.js';
import { TmpScratchSpace } from '../src/adapters/fs/TmpScratchSpace.js';
import { CliGitProbe } from '../src/adapters/git/CliGitProbe.js';
import { NodeProcessRunner } from '../src/adapters/process/NodeProcessRunner.js';
import { type AgentConfig, parseConfig } from '../src/config.js';
import { type RunPlanDeps, runPlan } from '../src/core/plan/runPlan.js';
import type { Logger } from '../src/ports/Logger.js';
import { fixturePath, PLANTED_SECRETS } from './fixtures.js';

let dir: string;
let binDir: string;
const logged: object[] = [];
const log: Logger = { info: (o) => logged.push(o), warn: (o) => logged.push(o) };

function config(extra = ''): AgentConfig {
  const r = parseConfig(
    `
site: ship-7
agent: a1
dataDir: ${dir}/data
hubPublicKeyFile: ${dir}/hub.pub
upstreams: [{ url: "http://127.0.0.1:1", tokenFile: ${dir}/token }]
components:
  - name: network
    workingDir: ${dir}/infra
    environments: [prod, { name: staging, varFiles: [staging.tfvars], workspace: stg }]
    lockTimeoutS: 45
    lockRetryThreshold: 3
    timeoutS: 0.5
${extra}`,
    dir,
  );
  if (!r.ok) throw new Error(r.problems.join('\n'));
  return r.config;
}

function deps(scenario: string, env: Record<string, string> = {}): RunPlanDeps {
  return {
    proc: new NodeProcessRunner(),
    git: new CliGitProbe(),
    scratch: new TmpScratchSpace(dir),
    clock: { now: () => Date.UTC(2024, 2, 1, 10) },
    baseEnv: {
      PATH: `${binDir}:${process.env.PATH}`,
      FAKE_TF_SCENARIO: scenario,
      FAKE_TF_PLAN_JSON: fixturePath('plans/v1.2-kitchen-sink.json'),
      FAKE_TF_ARGS_FILE: join(dir, `args-${scenario}`),
      ...env,
    },
    varFiles: new FsVarFiles(),
    log,
  };
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'runplan-'));
  binDir = join(dir, 'bin');
  mkdirSync(binDir);
  mkdirSync(join(dir, 'infra'));
  symlinkSync(fixturePath('fake-terraform'), join(binDir, 'terraform'));
});

describe('runPlan with a fake terraform', () => {
  it('runs plan then show -json and returns a hashed, redacted summary', async () => {
    const r = await runPlan('network', 'staging', config(), deps('changes'));
    expect(PlanSummarySchema.parse(r.summary)).toMatchObject({
      component: 'network',
      environment: 'staging',
      status: 'changes',
      exitCode: 2,
    });
    expect(r.summary.planHash).toMatch(/^[0-9a-f]{64}$/);
    expect(r.canonical).toContain('aws_db_instance.main');
    const args = readFileSync(join(dir, 'args-changes'), 'utf8').split('\n');
    expect(args[0]).toMatch(
      /^plan -input=false -no-color -json -out=\S+plan\.tfplan -detailed-exitcode -lock-timeout=45s -var-file=staging\.tfvars$/,
    );
    expect(args[1]).toMatch(/^show -json -no-color \S+plan\.tfplan$/);
    const text = JSON.stringify(r);
    for (const s of PLANTED_SECRETS) expect(text).not.toContain(s);
  });

  it('reports a state lock as locked, then failed/stuck-lock at the threshold', async () => {
    const first = await runPlan('network', 'prod', config(), deps('lock'));
    expect(first.summary).toMatchObject({ status: 'locked', reason: 'state-locked' });
    expect(first.summary.errorExcerpt).toContain('Error acquiring the state lock');
    expect(first.lockedStreak).toBe(1);
    const third = await runPlan('network', 'prod', config(), deps('lock'), { lockedStreak: 2 });
    expect(third.summary).toMatchObject({ status: 'failed', reason: 'stuck-lock' });
    expect(third.lockedStreak).toBe(3);
  });

  it("carries Terraform's Lock Info as the run's lock, with where to run force-unlock", async () => {
    const r = await runPlan('network', 'staging', config(), deps('lock'), { lockedStreak: 2 });
    expect(PlanSummarySchema.parse(r.summary)).toMatchObject({
      status: 'failed',
      reason: 'stuck-lock',
      lock: {
        id: '5ba24658-9d93-e5d5-231e-bf92254a663e',
        path: 'terraform.tfstate',
        who: 'root@vm',
        created: '2026-12-02 16:46:18.137954996 +0000 UTC',
        workspace: 'stg',
      },
    });
    expect(r.summary.errorExcerpt).toContain('ID:        5ba24658-9d93-e5d5-231e-bf92254a663e');
    expect(r.summary.errorExcerpt).toContain('"-lock=false"');
  });

  it('times out with SIGTERM, and SIGKILLs a tool that ignores it', async () => {
    const r = await runPlan('network', 'prod', config(), deps('timeout'));
    expect(r.summary).toMatchObject({ status: 'failed', reason: 'timeout' });
    const s = await runPlan('network', 'prod', config(), deps('stubborn'), { killGraceMs: 100 });
    expect(s.summary).toMatchObject({ status: 'failed', reason: 'timeout' });
  });

  it('names an unexpected exit code', async () => {
    const r = await runPlan('network', 'prod', config(), deps('exit3'));
    expect(r.summary).toMatchObject({
      status: 'failed',
      reason: 'exit-3',
      exitCode: 3,
      errorExcerpt: 'Error: something odd happened',
    });
  });

  it('keeps secrets out of a failed run: value lines dropped, a line with a known value withheld, rule logged', async () => {
    const r = await runPlan('network', 'prod', config(), deps('secret-stderr'));
    expect(r.summary).toMatchObject({
      status: 'failed',
      reason: 'exit-1',
      errorExcerpt: 'Error: configuring provider: invalid credentials',
    });
    const e = await runPlan(
      'network',
      'prod',
      config(),
      deps('env-echo', { TF_VAR_db_password: 'plain-words-pass' }),
    );
    expect(e.summary).toMatchObject({
      status: 'failed',
      reason: 'exit-1',
      errorExcerpt: '(error output withheld: it matched the redaction rule known-value-env)',
    });
    expect(e.excerptWithheld).toBe('known-value-env');
    expect(JSON.stringify([r, e, logged])).not.toMatch(/AKIAIOSFODNN7EXAMPLE|plain-words-pass/);
    expect(logged).toContainEqual(expect.objectContaining({ rule: 'known-value-env' }));
  });

  it('runs plan without -json, once refused, for a Terraform older than 0.15.3', async () => {
    const r = await runPlan('network', 'prod', config(), deps('no-json'));
    expect(r.summary).toMatchObject({ status: 'changes', exitCode: 2 });
    const plans = readFileSync(join(dir, 'args-no-json'), 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('plan'));
    expect(plans.map((l) => l.includes(' -json '))).toEqual([true, false]);
  });

  it('reports garbage from show as not-a-plan, and a failing show by its exit code', async () => {
    expect((await runPlan('network', 'prod', config(), deps('garbage'))).summary).toMatchObject({
      status: 'failed',
      reason: 'not-a-plan',
    });
    expect((await runPlan('network', 'prod', config(), deps('show-fails'))).summary).toMatchObject({
      status: 'failed',
      reason: 'exit-1',
    });
  });

  it('runs a command override that prints plan JSON, with placeholders filled', async () => {
    const cfg = config(
      `    command: ["sh", "-c", "echo {component}/{environment} > ${dir}/override; cat ${fixturePath('plans/v1.0-tf1.1-drift-only.json')}"]`,
    );
    const r = await runPlan('network', 'prod', cfg, deps('changes'));
    expect(r.summary.status).toBe('drift');
    expect(readFileSync(join(dir, 'override'), 'utf8').trim()).toBe('network/prod');
  });

  it('refuses plan JSON over the size limit without reading it all', async () => {
    const cfg = config(`limits: { maxPlanBytes: 1000 }`);
    expect((await runPlan('network', 'prod', cfg, deps('changes'))).summary).toMatchObject({
      status: 'failed',
      reason: 'plan-too-large',
    });
  });

  it('records a run the agent itself could not carry out as failed/agent-error, not an exception', async () => {
    const d = deps('changes');
    d.scratch = { create: () => Promise.reject(new Error('ENOSPC: no space left on device')) };
    expect((await runPlan('network', 'prod', config(), d)).summary).toMatchObject({
      status: 'failed',
      reason: 'agent-error',
    });
  });

  it('says tool-not-found when the tool is missing', async () => {
    const d = deps('changes');
    d.baseEnv = { ...d.baseEnv, PATH: '/nonexistent' };
    expect((await runPlan('network', 'prod', config(), d)).summary).toMatchObject({
      status: 'failed',
      reason: 'tool-not-found',
    });
  });

  it('records the git commit and branch of the working directory', async () => {
    const repo = join(dir, 'repo');
    mkdirSync(repo);
    writeFileSync(join(repo, 'main.tf'), '# empty\n');
    const { execFileSync } = await import('node:child_process');
    const g = (...a: string[]) =>
      execFileSync('git', ['-C', repo, '-c', 'user.email=t@e', '-c', 'user.name=t', ...a]);
    g('init', '-q', '-b', 'edge-main');
    g('add', '.');
    g('commit', '-q', '-m', 'init');
    const cfg = config(`  - name: repo\n    workingDir: ${repo}\n    environments: [prod]`);
    const r = await runPlan('repo', 'prod', cfg, deps('changes'));
    expect(r.summary.git).toMatchObject({
      branch: 'edge-main',
      dirty: false,
      commit: expect.stringMatching(/^[0-9a-f]{40}$/),
    });
  });
});
