import { rmSync } from 'node:fs';
import { expect, it } from 'vitest';
import { makeCase } from './harness.js';
import { scenario } from './hcl.js';
import type { ContractTool } from './tools.js';

const SLOW = { timeout: 180_000 };

const CHECKS = `variable "n" {
  default = 1
}
resource "terraform_data" "x" {
  input = "a"
  lifecycle {
    postcondition {
      condition     = self.input == "a"
      error_message = "The input changed."
    }
  }
}
resource "terraform_data" "later" {
  input = "b"
  lifecycle {
    postcondition {
      condition     = self.output == "b"
      error_message = "Known only after apply."
    }
  }
}
check "health" {
  assert {
    condition     = var.n == 2
    error_message = "n must be two, it is \${var.n}-units"
  }
}
check "fine" {
  assert {
    condition     = var.n == 1
    error_message = "never shown"
  }
}
`;

/**
 * Continuous validation and the three results of issue 43 (docs/decisions/420-checks-beside-status.md),
 * run against each tool like the rest of the contract. A case the fake does not model is skipped for it.
 */
export function runIssue43Contract(tool: ContractTool): void {
  const fake = tool.name === 'fake';
  const realOnly = (name: string, why: string) =>
    fake ? it.skip(`${name} (the fake does not model ${why})`, () => {}) : undefined;

  // The fake prints the same `checks` as the real binary does for CHECKS (a scenario step's `checks`).
  const fakeChecks = scenario(
    `{ state: changes, checks: [{ address: check.health, status: fail, message: "n must be two, it is 1-units" }, { address: check.fine, status: pass }, { address: terraform_data.x, kind: resource, status: pass }, { address: terraform_data.later, kind: resource, status: unknown }] }`,
  );
  const checksCase = (name: string, config?: string) =>
    makeCase(
      tool,
      name,
      fake
        ? { scenario: fakeChecks, ...(config ? { config } : {}) }
        : { files: { 'main.tf': CHECKS }, ...(config ? { config } : {}) },
    );

  it(
    'summarises checks: a failing check, a passing one, a postcondition (pass and unknown)',
    SLOW,
    async () => {
      const r = await checksCase('checks').plan();
      expect(r.summary).toMatchObject({ status: 'changes', exitCode: 2 });
      expect(r.summary.checks).toMatchObject({ fail: 1, pass: 2, unknown: 1 });
      const by = Object.fromEntries((r.summary.checks?.items ?? []).map((i) => [i.address, i]));
      expect(by['check.health']).toEqual({ address: 'check.health', kind: 'check', status: 'fail' });
      expect(by['check.fine']).toMatchObject({ status: 'pass', kind: 'check' });
      expect(by['terraform_data.x']).toMatchObject({ status: 'pass', kind: 'resource' });
      expect(by['terraform_data.later']).toMatchObject({ status: 'unknown', kind: 'resource' });
      expect(r.summary.checks?.items[0]?.address).toBe('check.health');
      // The author-written message is not kept by default.
      expect(JSON.stringify(r.summary)).not.toContain('must be two');
    },
  );

  it('keeps a failing check message with redaction.keepCustomMessages', SLOW, async () => {
    const r = await checksCase('checks-kept', 'redaction: { keepCustomMessages: true }').plan();
    const health = r.summary.checks?.items.find((i) => i.address === 'check.health');
    expect(health?.message).toBe('n must be two, it is 1-units');
  });

  it('fails an environment whose working directory is missing, alone, saying so', SLOW, async () => {
    const c = makeCase(tool, 'no-dir', { files: { 'main.tf': '' }, scenario: scenario('{ state: clean }') });
    rmSync(c.dir, { recursive: true, force: true });
    const r = await c.plan();
    expect(r.summary).toMatchObject({ status: 'failed', reason: 'working-dir-missing' });
    expect(r.summary.errorExcerpt).toBe(
      `working directory "${c.dir}" does not exist (create it or correct workingDir in the agent's config)`,
    );
  });

  realOnly('is blocked on an offline registry module, naming its source and version', 'registry modules');
  if (!fake)
    it('is blocked on an offline registry module, naming its source and version', SLOW, async () => {
      const c = makeCase(tool, 'registry-module', {
        files: {
          'main.tf':
            'module "vpc" {\n  source  = "terraform-aws-modules/vpc/aws"\n  version = "5.0.0"\n\n  name = "x"\n}\n',
        },
        component: 'init: true',
      });
      const r = await c.plan();
      expect(r.summary).toMatchObject({
        status: 'blocked',
        reason: 'modules-missing',
        needs: ['module terraform-aws-modules/vpc/aws 5.0.0'],
      });
    });

  realOnly('is blocked without init: on a provider that is not installed, naming it', 'plan without init');
  if (!fake)
    it('is blocked without init: on a provider that is not installed, naming it', SLOW, async () => {
      const lock =
        'provider "registry.terraform.io/hashicorp/null" {\n  version     = "3.2.2"\n  constraints = "3.2.2"\n  hashes = [\n    "h1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",\n  ]\n}\n';
      const c = makeCase(tool, 'no-init-provider', {
        files: {
          'main.tf':
            'terraform {\n  required_providers {\n    null = { source = "hashicorp/null", version = "3.2.2" }\n  }\n}\nresource "null_resource" "x" {}\n',
          '.terraform.lock.hcl': lock,
        },
      });
      const r = await c.plan();
      expect(r.summary).toMatchObject({
        status: 'blocked',
        reason: 'providers-missing',
        needs: ['registry.terraform.io/hashicorp/null 3.2.2'],
      });
    });
}
