import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { FsVarFiles } from '../src/adapters/fs/FsVarFiles.js';
import { TmpScratchSpace } from '../src/adapters/fs/TmpScratchSpace.js';
import { CliGitProbe } from '../src/adapters/git/CliGitProbe.js';
import { NodeProcessRunner } from '../src/adapters/process/NodeProcessRunner.js';
import { type AgentConfig, parseConfig } from '../src/config.js';
import { CUSTOM_MESSAGE_DROPPED } from '../src/core/plan/diagnostics.js';
import { type RunPlanDeps, runPlan } from '../src/core/plan/runPlan.js';

/** The simulation's fake terraform: a real program that fails validation rules as Terraform does. */
const SIM_TERRAFORM = fileURLToPath(new URL('../../simulation/bin/terraform', import.meta.url));
const SECRET = 'correct-horse-battery-staple';

let dir: string;
let deps: RunPlanDeps;

function config(components: string): AgentConfig {
  const r = parseConfig(
    `site: ship-7
agent: a1
dataDir: ${dir}/data
hubPublicKeyFile: ${dir}/hub.pub
upstreams: [{ url: "http://127.0.0.1:1", tokenFile: ${dir}/token }]
components:
${components}`,
    dir,
  );
  if (!r.ok) throw new Error(r.problems.join('\n'));
  return r.config;
}

/** A component directory whose fake terraform fails `db_password`'s validation rule. */
function failingComponent(name: string, variant: number): string {
  const work = join(dir, name);
  mkdirSync(work);
  writeFileSync(
    join(work, 'fake-terraform.yaml'),
    `steps:\n  - state: invalid-variable\n    variant: ${variant}\n`,
  );
  writeFileSync(join(work, 'staging.tfvars'), `db_password = "${SECRET}"\nregion      = "eu-north-1"\n`);
  return work;
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'runplan-hostile-'));
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  symlinkSync(SIM_TERRAFORM, join(bin, 'terraform'));
  deps = {
    proc: new NodeProcessRunner(),
    git: new CliGitProbe(),
    scratch: new TmpScratchSpace(dir),
    clock: { now: () => Date.UTC(2024, 2, 1, 10) },
    baseEnv: { PATH: `${bin}:${process.env.PATH}`, HOME: dir },
    varFiles: new FsVarFiles(),
  };
});

describe('runPlan: a plan failing a variable validation rule', { timeout: 60_000 }, () => {
  it('reports the failure from the -json diagnostics and lets no quoted value out', async () => {
    const work = failingComponent('json0', 0);
    const cfg = config(
      `  - name: db\n    workingDir: ${work}\n    environments: [{ name: staging, varFiles: [staging.tfvars] }]\n`,
    );
    const r = await runPlan('db', 'staging', cfg, deps);
    expect(r.summary).toMatchObject({ status: 'failed', reason: 'exit-1', exitCode: 1 });
    // The rule's message is the author's text, which can interpolate any value: not kept by default.
    expect(r.summary.errorExcerpt).toBe(
      ['Error: Invalid value for variable', '  on staging.tfvars line 1', `  ${CUSTOM_MESSAGE_DROPPED}`].join(
        '\n',
      ),
    );
    expect(JSON.stringify(r)).not.toContain(SECRET);
  });

  it('keeps the rule message with redaction.keepCustomMessages, and withholds it when it quotes the value', async () => {
    const kept = failingComponent('json0kept', 0);
    const keep = (work: string) =>
      config(
        `  - name: db\n    workingDir: ${work}\n    environments: [{ name: staging, varFiles: [staging.tfvars] }]\n` +
          'redaction: { keepCustomMessages: true }\n',
      );
    const a = await runPlan('db', 'staging', keep(kept), deps);
    expect(a.summary.errorExcerpt).toBe(
      [
        'Error: Invalid value for variable',
        '  on staging.tfvars line 1',
        '  The db password must be at least 32 characters long.',
        '  This was checked by the validation rule at variables.tf:4,3-13.',
      ].join('\n'),
    );
    const work = failingComponent('json1', 1);
    const cfg = keep(work);
    const r = await runPlan('db', 'staging', cfg, deps);
    expect(r.summary).toMatchObject({
      status: 'failed',
      reason: 'exit-1',
      errorExcerpt: '(error output withheld: it matched the redaction rule known-value-var-file)',
    });
    expect(JSON.stringify(r)).not.toContain(SECRET);
  });

  it.each([0, 1])(
    'does the same from plain stderr behind a wrapper that does not ask for JSON (variant %i)',
    async (variant) => {
      const work = failingComponent(`wrapper${variant}`, variant);
      const cfg = config(
        `  - name: db\n    workingDir: ${work}\n    environments: [{ name: staging, varFiles: [staging.tfvars] }]\n` +
          `    command: ["sh", "-c", "terraform plan -out=p.tfplan -detailed-exitcode -var-file=staging.tfvars"]\n`,
      );
      const r = await runPlan('db', 'staging', cfg, deps);
      expect(r.summary).toMatchObject({ status: 'failed', reason: 'exit-1' });
      expect(r.summary.errorExcerpt).toContain('Invalid value for variable');
      expect(r.summary.errorExcerpt).toContain(CUSTOM_MESSAGE_DROPPED);
      expect(JSON.stringify(r)).not.toContain(SECRET);
    },
  );
});

describe('runPlan: hostile plan JSON from the tool', () => {
  function printing(name: string, json: string): AgentConfig {
    const file = join(dir, `${name}.json`);
    writeFileSync(file, json);
    return config(
      `  - name: ${name}\n    workingDir: ${dir}\n    environments: [prod]\n    command: ["cat", "${file}"]\n`,
    );
  }

  it('records a plan nested 5,000 levels deep as failed with a reason, without overflowing the stack', async () => {
    const deep = `${'{"a":'.repeat(5000)}"leaf"${'}'.repeat(5000)}`;
    const plan = `{"format_version":"1.2","planned_values":{},"resource_changes":[{"address":"a.b","type":"a","change":{"actions":["update"],"before":${deep},"after":{}}}]}`;
    const r = await runPlan('deep', 'prod', printing('deep', plan), deps);
    expect(r.summary).toMatchObject({ status: 'failed', reason: 'plan-too-deep' });
  });

  it('records a plan with a 100,000-character key as failed with a reason', async () => {
    const key = 'k'.repeat(100_000);
    const plan = `{"format_version":"1.2","planned_values":{},"resource_changes":[{"address":"a.b","type":"a","change":{"actions":["update"],"before":{"tags":{"${key}":"x"}},"after":{"tags":{}}}}]}`;
    const r = await runPlan('longkey', 'prod', printing('longkey', plan), deps);
    expect(r.summary).toMatchObject({ status: 'failed', reason: 'plan-key-too-long' });
    expect(JSON.stringify(r)).not.toContain('kkkkkkkkkkkkkkkk');
  });
});
