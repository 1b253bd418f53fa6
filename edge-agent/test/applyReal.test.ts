import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  type ApplyHarness,
  approve,
  claimsFor,
  doc,
  git,
  planNow,
  settles,
  startApplyAgent,
} from './helpers/applyAgent.js';
import { describeRealTerraform } from './helpers/realTerraform.js';

/**
 * The act loop's rules on the real Terraform (issue 28): `terraform_data` needs no provider, so these
 * plans and applies are real Terraform behaviour with nothing to install. Each component is a git
 * checkout planned in place, with its state in `terraform.tfstate` beside its code.
 */
const WEB_TF = 'variable "web" {}\nresource "terraform_data" "web" { input = var.web }\n';
const APPLY = '{ approvers: ["{A}"] }';

let h: ApplyHarness;
const dirOf = (c: string) => join(h.dir, c);
const state = (c: string) => JSON.parse(readFileSync(join(dirOf(c), 'terraform.tfstate'), 'utf8'));
const planFile = (runId: string) => join(h.dir, 'data', 'plans', `${runId}.tfplan`);

describeRealTerraform('the act loop on the real terraform', () => {
  beforeAll(async () => {
    const files = { 'main.tf': WEB_TF, 'terraform.tfvars': 'web = "web-v5"\n' };
    h = await startApplyAgent(
      [
        { name: 'web', scenario: '', files, git: true, apply: APPLY },
        { name: 'stale', scenario: '', files, git: true, apply: APPLY },
      ],
      { terraform: 'real' },
    );
  }, 120_000);
  afterAll(() => h?.close());

  it('makes a new run of a plan whose values changed, or whose commit is newer, and applies what it showed', {
    timeout: 180_000,
  }, async () => {
    const first = await planNow(h, 'web');
    expect(doc(h).runs[first]?.summary.status).toBe('changes');
    // The same plan again only confirms the run.
    const again = await planNow(h, 'web');
    expect(doc(h).runs[again]).toBeUndefined();
    expect(doc(h).cells['prod/web']?.runId).toBe(first);

    // A value only: the same resources, actions and attribute names, another input.
    writeFileSync(join(dirOf('web'), 'terraform.tfvars'), 'web = "web-v6"\n');
    const v6 = await planNow(h, 'web');
    expect(doc(h).runs[v6]?.summary.status).toBe('changes');
    expect(doc(h).cells['prod/web']?.runId).toBe(v6);
    expect(existsSync(planFile(v6))).toBe(true);
    // No value leaves the site: the hash is keyed, the summary names no value.
    expect(JSON.stringify(doc(h))).not.toContain('web-v6');

    // A newer commit planning the same values: a run of its own, at that commit.
    git(dirOf('web'), 'commit', '-qam', 'web-v6');
    const commit = git(dirOf('web'), 'rev-parse', 'HEAD');
    const atCommit = await planNow(h, 'web');
    expect(doc(h).runs[atCommit]?.summary.git?.commit).toBe(commit);
    expect(doc(h).cells['prod/web']).toMatchObject({ runId: atCommit, commit });

    // Approving what the cell shows applies exactly that: web-v6, and the next plan is clean.
    await approve(h, claimsFor(h, atCommit));
    const a = await settles(h, atCommit, (x) => x.state === 'applied' && x.nextRunId !== undefined);
    expect(state('web').resources[0].instances[0].attributes.input.value).toBe('web-v6');
    expect(doc(h).runs[a.nextRunId as string]?.summary.status).toBe('clean');
  });

  it('after a stale saved plan, plans a run of its own that is approved again and applied', {
    timeout: 180_000,
  }, async () => {
    const runId = await planNow(h, 'stale');
    // Someone applied elsewhere: the state's serial moved on, so the saved plan is stale.
    await approve(h, claimsFor(h, runId));
    await settles(h, runId, (x) => x.state === 'applied' && x.nextRunId !== undefined);
    writeFileSync(join(dirOf('stale'), 'terraform.tfvars'), 'web = "web-v7"\n');
    const second = await planNow(h, 'stale');
    const s = state('stale');
    writeFileSync(join(dirOf('stale'), 'terraform.tfstate'), JSON.stringify({ ...s, serial: s.serial + 5 }));
    await approve(h, claimsFor(h, second));
    const failed = await settles(h, second, (x) => x.state === 'apply-failed' && x.nextRunId !== undefined);
    expect(failed.reason).toBe('stale-plan');
    expect(failed.errorExcerpt).toContain('Saved plan is stale');
    const next = failed.nextRunId as string;
    expect(doc(h).cells['prod/stale']?.runId).toBe(next);
    expect(doc(h).runs[next]?.summary.status).toBe('changes');
    expect(doc(h).runs[next]?.summary.planHash).toBe(doc(h).runs[second]?.summary.planHash);
    expect(existsSync(planFile(next))).toBe(true);
    await approve(h, claimsFor(h, next));
    const done = await settles(h, next, (x) => x.state === 'applied' && x.nextRunId !== undefined);
    expect(state('stale').resources[0].instances[0].attributes.input.value).toBe('web-v7');
    expect(doc(h).runs[done.nextRunId as string]?.summary.status).toBe('clean');
  });
});
