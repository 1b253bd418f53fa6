import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { layOutTestProvider, type TestProviderLayout } from '../../../simulation/provider/mirror.js';
import { FsPlanFiles } from '../../src/adapters/fs/FsPlanFiles.js';
import { planDeps } from '../../src/adapters/planDeps.js';
import { type AgentConfig, parseConfig } from '../../src/config.js';
import { type ApplyResult, runApply } from '../../src/core/apply/runApply.js';
import { findTarget } from '../../src/core/plan/planTarget.js';
import { type RunPlanDeps, type RunPlanResult, runPlan } from '../../src/core/plan/runPlan.js';
import type { ContractTool } from './tools.js';

const quiet = { info: () => {}, warn: () => {} };

/** What a contract case lays out: HCL for a real binary, a scenario for the fake, and the component's settings. */
export interface CaseSpec {
  /** Files of the working directory (the real binary reads these; the fake reads `*.tf` only for its digest). */
  files?: Record<string, string>;
  /** `fake-terraform.yaml` for the simulation's fake. */
  scenario?: string;
  /** Extra YAML lines of the component (indented by 4), e.g. `init: true`. */
  component?: string;
  /** Extra top-level YAML lines of the agent's config, e.g. `redaction: { keepCustomMessages: true }`. */
  config?: string;
}

/** One case's working directory, config and the agent's own plan and apply path. */
export interface ContractCase {
  root: string;
  dir: string;
  objectsFile: string;
  provider: TestProviderLayout;
  config: AgentConfig;
  deps: RunPlanDeps;
  /** The agent's plan (runPlan), keeping the saved plan file. */
  plan(): Promise<RunPlanResult>;
  /** The agent's apply (runApply) of a plan result's kept file. */
  apply(r: RunPlanResult): Promise<ApplyResult>;
  /** Runs the tool directly in the working directory (setup only: assertions go through plan/apply). */
  tf(...args: string[]): { status: number | null; stdout: string; stderr: string };
  objects(): { objects: Record<string, Record<string, string | null>>; failApply?: string[] };
  editObjects(fn: (o: ReturnType<ContractCase['objects']>) => void): void;
}

let shared: { root: string; provider: TestProviderLayout } | undefined;

/** One provider mirror for every case of a test file (the objects file is per case, by environment). */
function sharedProvider(): { root: string; provider: TestProviderLayout } {
  if (!shared) {
    const root = mkdtempSync(join(tmpdir(), 'driftline-tfcontract-'));
    shared = {
      root,
      provider: layOutTestProvider(join(root, 'provider'), { objectsFile: join(root, 'unused.json') }),
    };
  }
  return shared;
}

let n = 0;

export function makeCase(tool: ContractTool, name: string, spec: CaseSpec): ContractCase {
  const { root: base, provider } = sharedProvider();
  const root = join(base, `${++n}-${name.replace(/[^a-z0-9]+/gi, '-').slice(0, 40)}`);
  const dir = join(root, 'infra');
  mkdirSync(dir, { recursive: true });
  for (const [f, text] of Object.entries(spec.files ?? {})) {
    mkdirSync(dirname(join(dir, f)), { recursive: true });
    writeFileSync(join(dir, f), text);
  }
  if (spec.scenario !== undefined) writeFileSync(join(dir, 'fake-terraform.yaml'), spec.scenario);
  const objectsFile = join(root, 'objects.json');
  writeFileSync(objectsFile, '{"objects":{}}\n');
  const parsed = parseConfig(
    `
site: s1
agent: a1
dataDir: ${root}/data
hubPublicKeyFile: ${root}/hub.pub
upstreams: [{ url: "http://127.0.0.1:1", tokenFile: ${root}/token }]
providerMirrors: [${JSON.stringify(provider.mirrorDir)}]
${spec.config ?? ''}
components:
  - name: c
    workingDir: ${dir}
    environments: [prod]
    tool: ${tool.tool}
    lockTimeoutS: 0
    timeoutS: 300
${(spec.component ?? '')
  .split('\n')
  .map((l) => `    ${l}`)
  .join('\n')}
`,
    root,
  );
  if (!parsed.ok) throw new Error(parsed.problems.join('\n'));
  const config = parsed.config;
  const baseEnv: Record<string, string> = {
    PATH: tool.path,
    HOME: process.env.HOME ?? root,
    CHECKPOINT_DISABLE: '1',
    TF_DISABLE_PLUGIN_TLS: '1',
    DRIFTLINE_TESTOBJ_FILE: objectsFile,
  };
  const deps: RunPlanDeps = {
    ...planDeps(config, quiet, Date.now, baseEnv),
    planFiles: new FsPlanFiles(join(root, 'data', 'plans')),
  };
  const t = findTarget(config, 'c', 'prod')!;
  const tfEnv = { ...baseEnv, TF_CLI_CONFIG_FILE: provider.cliConfigFile, TF_IN_AUTOMATION: '1' };
  const c: ContractCase = {
    root,
    dir,
    objectsFile,
    provider,
    config,
    deps,
    plan: () => runPlan('c', 'prod', config, deps, { keepPlanFile: true }),
    apply: async (r) => {
      if (!r.keptPlan)
        throw new Error(`the plan kept no file (status ${r.summary.status}, ${r.summary.reason ?? ''})`);
      const meta = { runId: `r${++n}`, environment: 'prod', component: 'c', ref: 'main' };
      return runApply(t, config, deps, { path: r.keptPlan.path, sha256: r.keptPlan.sha256, meta });
    },
    tf: (...args) => {
      const r = spawnSync(tool.tool, args, { cwd: dir, env: tfEnv, encoding: 'utf8' });
      return { status: r.status, stdout: r.stdout, stderr: r.stderr };
    },
    objects: () => JSON.parse(readFileSync(objectsFile, 'utf8')),
    editObjects: (fn) => {
      const o = c.objects();
      fn(o);
      writeFileSync(objectsFile, JSON.stringify(o));
    },
  };
  return c;
}

/** `terraform init` + `apply -auto-approve` directly: the state a case starts from. */
export function applyDirectly(c: ContractCase): void {
  for (const args of [
    ['init', '-input=false', '-no-color'],
    ['apply', '-input=false', '-no-color', '-auto-approve'],
  ]) {
    const r = c.tf(...args);
    if (r.status !== 0) throw new Error(`setup: terraform ${args[0]} failed:\n${r.stdout}\n${r.stderr}`);
  }
}

/** A git repository holding `files`, for `git::file://` module sources. */
export function gitRepo(dir: string, files: Record<string, string>): string {
  mkdirSync(dir, { recursive: true });
  for (const [f, text] of Object.entries(files)) writeFileSync(join(dir, f), text);
  const git = (...args: string[]) =>
    execFileSync('git', args, {
      cwd: dir,
      env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: dir },
      stdio: 'pipe',
    });
  git('init', '-q', '-b', 'main');
  git('add', '.');
  git('-c', 'user.email=t@example.com', '-c', 'user.name=t', 'commit', '-qm', 'module');
  return dir;
}
