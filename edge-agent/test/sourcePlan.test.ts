import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FsVarFiles } from '../src/adapters/fs/FsVarFiles.js';
import { TmpScratchSpace } from '../src/adapters/fs/TmpScratchSpace.js';
import { CliGitMirror } from '../src/adapters/git/CliGitMirror.js';
import { CliGitProbe } from '../src/adapters/git/CliGitProbe.js';
import { NodeProcessRunner } from '../src/adapters/process/NodeProcessRunner.js';
import { type AgentConfig, parseConfig } from '../src/config.js';
import { type RunPlanDeps, runPlan } from '../src/core/plan/runPlan.js';

const FAKE_BIN = resolve(import.meta.dirname, '../../simulation/bin');
let dir: string;
let mirror: CliGitMirror;
let main: string;
let pr: string;

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.email=hq@example.org', '-c', 'user.name=hq', ...args], {
    cwd,
    encoding: 'utf8',
  }).trim();

const scenario = (state: string) =>
  `component: network\nenvironment: prod\nseed: 3\nsteps:\n  - { state: ${state} }\n`;

function config(): AgentConfig {
  const r = parseConfig(
    `
site: ship-7
agent: a1
dataDir: ${dir}/data
hubPublicKeyFile: ${dir}/hub.pub
upstreams: [{ url: "http://127.0.0.1:1", tokenFile: ${dir}/token }]
components:
  - name: network
    source: { repo: infra, path: stacks/network, refs: [main, "pr/*"] }
    environments: [prod]
`,
    dir,
  );
  if (!r.ok) throw new Error(r.problems.join('\n'));
  return r.config;
}

function deps(): RunPlanDeps {
  return {
    proc: new NodeProcessRunner(),
    git: new CliGitProbe(),
    scratch: new TmpScratchSpace(join(dir, 'scratch')),
    clock: { now: () => Date.now() },
    baseEnv: { PATH: `${FAKE_BIN}:${process.env.PATH}`, FAKE_TERRAFORM_NETWORK: '1' },
    varFiles: new FsVarFiles(),
    mirror,
    providerMirrors: [join(dir, 'providers')],
    writeFile: (p, t) => writeFile(p, t),
    exists: async () => false,
  };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'dl-source-plan-'));
  execFileSync('mkdir', ['-p', join(dir, 'scratch'), join(dir, 'src/stacks/network')]);
  const src = join(dir, 'src');
  git(src, 'init', '-q', '-b', 'main');
  writeFileSync(join(src, 'stacks/network/main.tf'), '# network\n');
  writeFileSync(join(src, 'stacks/network/fake-terraform.yaml'), scenario('clean'));
  git(src, 'add', '.');
  git(src, 'commit', '-qm', 'main');
  main = git(src, 'rev-parse', 'HEAD');
  git(src, 'checkout', '-qb', 'pr/1');
  writeFileSync(join(src, 'stacks/network/fake-terraform.yaml'), scenario('changes'));
  git(src, 'commit', '-qam', 'pr');
  pr = git(src, 'rev-parse', 'HEAD');
  git(src, 'bundle', 'create', join(dir, 'all.bundle'), 'main', 'pr/1');
  mirror = new CliGitMirror(join(dir, 'mirrors'));
  const applied = await mirror.apply('infra', join(dir, 'all.bundle'));
  expect(applied.ok).toBe(true);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('planning a ref from the site mirror (real git, fake terraform process)', () => {
  it('plans the default ref and a PR ref, each of its own commit, and cleans the worktree up', async () => {
    const a = await runPlan('network', 'prod', config(), deps());
    expect(a.summary).toMatchObject({ status: 'clean', ref: 'main', git: { commit: main, branch: 'main' } });
    const b = await runPlan('network', 'prod', config(), deps(), { source: { ref: 'pr/1' } });
    expect(b.summary).toMatchObject({ status: 'changes', ref: 'pr/1', git: { commit: pr } });
    expect(b.summary.counts?.add ?? 0).toBeGreaterThan(0);
    const c = await runPlan('network', 'prod', config(), deps(), { source: { ref: 'pr/1', commit: main } });
    expect(c.summary).toMatchObject({ status: 'clean', ref: 'pr/1', git: { commit: main } });
    expect(readdirSync(join(dir, 'scratch'))).toEqual([]);
    expect(git(join(dir, 'mirrors/infra.git'), 'worktree', 'list').split('\n')).toHaveLength(1);
  }, 120_000);

  it('is blocked, naming the need, when the site lacks the ref or the commit', async () => {
    const a = await runPlan('network', 'prod', config(), deps(), { source: { ref: 'pr/9' } });
    expect(a.summary).toMatchObject({
      status: 'blocked',
      reason: 'source-missing',
      needs: ['ref pr/9 of infra'],
    });
    const sha = 'ab'.repeat(20);
    const b = await runPlan('network', 'prod', config(), deps(), { source: { ref: 'pr/1', commit: sha } });
    expect(b.summary).toMatchObject({ status: 'blocked', needs: [`commit ${sha} of infra`] });
  });
});
