import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { applyDirectly, type CaseSpec, type ContractCase, gitRepo, makeCase } from './harness.js';
import { obj, PROVIDER, SECRET, scenario } from './hcl.js';
import type { ContractTool } from './tools.js';

/** A real terraform run costs about a second of CPU: a case may take several. */
const SLOW = { timeout: 180_000 };

/**
 * Every Terraform behaviour the agent relies on, asserted through the agent's own code path (runPlan,
 * runApply, the summary), written once and run against each tool (docs/decisions/190-terraform-contract.md).
 * A case the fake does not model says so in its name and is skipped for the fake only.
 */
export function runTerraformContract(tool: ContractTool): void {
  const fake = tool.name === 'fake';
  const real = !fake;
  const children: ChildProcess[] = [];
  afterEach(() => {
    for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
  });
  const make = (name: string, realSpec: CaseSpec, fakeSpec: CaseSpec): ContractCase =>
    makeCase(tool, name, fake ? fakeSpec : realSpec);
  const init = 'init: true';
  /** Names a case the fake does not model; it still runs on every real binary. */
  const realOnly = (name: string, why: string) =>
    fake ? it.skip(`${name} (the fake does not model ${why})`, () => {}) : undefined;

  it(
    'plans changes: exit 2 under -detailed-exitcode, counts, format 1.x, a kept plan file, no values',
    SLOW,
    async () => {
      const c = make(
        'changes',
        { files: { 'main.tf': PROVIDER + obj('a') }, component: init },
        { scenario: scenario('{ state: changes }'), component: init },
      );
      const r = await c.plan();
      expect(r.summary).toMatchObject({ status: 'changes', exitCode: 2 });
      expect(r.summary.planHash).toMatch(/^[0-9a-f]{64}$/);
      expect(r.summary.formatVersion).toMatch(/^1\.[0-9]+$/);
      expect(r.summary.terraformVersion).toBe(
        fake ? r.summary.terraformVersion : tool.found.ok && tool.found.version,
      );
      const n = r.summary.counts!;
      expect(n.add + n.change + n.destroy).toBeGreaterThan(0);
      expect(r.keptPlan?.sha256).toMatch(/^[0-9a-f]{64}$/);
      if (real) {
        expect(n).toMatchObject({ add: 1, change: 0, destroy: 0, replace: 0, drift: 0 });
        expect(JSON.stringify(r)).not.toContain(SECRET);
      }
    },
  );

  it('plans clean with exit 0, from a filesystem mirror and the lock file', SLOW, async () => {
    const c = make(
      'clean',
      { files: { 'main.tf': PROVIDER + obj('a') }, component: init },
      { scenario: scenario('{ state: clean }'), component: init },
    );
    if (real) {
      applyDirectly(c);
      expect(readFileSync(join(c.dir, '.terraform.lock.hcl'), 'utf8')).toContain('driftline/testobj');
    }
    const r = await c.plan();
    expect(r.summary).toMatchObject({
      status: 'clean',
      exitCode: 0,
      counts: { add: 0, change: 0, destroy: 0, replace: 0, import: 0, drift: 0 },
    });
  });

  it('reports drift alone (exit 0) apart from proposed changes', SLOW, async () => {
    const c = make(
      'drift',
      {
        files: { 'main.tf': PROVIDER + obj('a', { extra: '  lifecycle { ignore_changes = [value] }\n' }) },
        component: init,
      },
      { scenario: scenario('{ state: drift }'), component: init },
    );
    if (real) {
      applyDirectly(c);
      c.editObjects((o) => {
        for (const v of Object.values(o.objects)) v.value = 'changed-outside';
      });
    }
    const r = await c.plan();
    expect(r.summary).toMatchObject({ status: 'drift', exitCode: 0 });
    expect(r.summary.counts).toMatchObject({ add: 0, change: 0, destroy: 0 });
    expect(r.summary.counts!.drift).toBeGreaterThan(0);
    expect(r.summary.resources?.some((x) => x.drift)).toBe(true);
    expect(JSON.stringify(r)).not.toContain('changed-outside');
  });

  realOnly('keeps drift apart from the change that undoes it', 'drift with its undo');
  if (real)
    it('keeps drift apart from the change that undoes it', SLOW, async () => {
      const c = make('drift-undo', { files: { 'main.tf': PROVIDER + obj('a') }, component: init }, {});
      applyDirectly(c);
      c.editObjects((o) => {
        for (const v of Object.values(o.objects)) v.value = 'changed-outside';
      });
      const r = await c.plan();
      expect(r.summary).toMatchObject({ status: 'changes', exitCode: 2 });
      expect(r.summary.counts).toMatchObject({ add: 0, change: 1, destroy: 0, drift: 1 });
      const drift = r.summary.resources?.find((x) => x.drift);
      expect(drift).toMatchObject({ address: 'driftline_object.a', actions: ['update'] });
      expect(drift?.changedAttributes).toEqual(['value']);
    });

  it('plans a force-new attribute as a replacement, counted in add, destroy and replace', SLOW, async () => {
    const c = make(
      'replace',
      { files: { 'main.tf': PROVIDER + obj('a') }, component: init },
      // The fake's first `changes` variant replaces a subnet (cidr_block forces it).
      { scenario: scenario('{ state: changes }'), component: init },
    );
    if (real) {
      applyDirectly(c);
      writeFileSync(join(c.dir, 'main.tf'), PROVIDER + obj('a', { shape: 'square' }));
    }
    const r = await c.plan();
    expect(r.summary).toMatchObject({ status: 'changes', exitCode: 2 });
    const n = r.summary.counts!;
    expect(n.replace).toBeGreaterThan(0);
    expect(n.add).toBeGreaterThanOrEqual(n.replace);
    expect(n.destroy).toBeGreaterThanOrEqual(n.replace);
    const replaced = r.summary.resources?.find((x) => !x.drift && x.actions.join() === 'delete,create');
    expect(replaced).toMatchObject({ reason: 'replace_because_cannot_update' });
    expect(replaced?.changedAttributes).toContain(real ? 'shape' : 'cidr_block');
    if (real) expect(n).toMatchObject({ add: 1, change: 0, destroy: 1, replace: 1 });
  });

  realOnly('reads a refresh-only plan (a command override) as drift', '-refresh-only');
  if (real)
    it('reads a refresh-only plan (a command override) as drift', SLOW, async () => {
      const script = `${tool.tool} plan -refresh-only -input=false -no-color -out=ro.tfplan >&2 && ${tool.tool} show -json ro.tfplan`;
      const c = make(
        'refresh-only',
        {
          files: { 'main.tf': PROVIDER + obj('a') },
          component: `command: ["sh", "-c", ${JSON.stringify(script)}]`,
        },
        {},
      );
      applyDirectly(c);
      c.editObjects((o) => {
        for (const v of Object.values(o.objects)) v.value = 'changed-outside';
      });
      const r = await c.plan();
      expect(r.summary.status).toBe('drift');
      expect(r.summary.counts).toMatchObject({ add: 0, change: 0, destroy: 0, drift: 1 });
    });

  realOnly('reads a moved block: the new address with where it came from', 'moved blocks');
  if (real)
    it('reads a moved block: the new address with where it came from', SLOW, async () => {
      const c = make('moved', { files: { 'main.tf': PROVIDER + obj('a') }, component: init }, {});
      applyDirectly(c);
      const moved = 'moved {\n  from = driftline_object.a\n  to   = driftline_object.b\n}\n';
      writeFileSync(join(c.dir, 'main.tf'), PROVIDER + obj('b', { name: 'a' }) + moved);
      const r = await c.plan();
      expect(r.summary).toMatchObject({ status: 'changes', exitCode: 2 });
      expect(r.summary.counts).toMatchObject({ add: 0, change: 0, destroy: 0 });
      expect(r.summary.resources).toContainEqual(
        expect.objectContaining({ address: 'driftline_object.b', previousAddress: 'driftline_object.a' }),
      );
    });

  it(
    'is locked while another process holds the state lock, and names the lock to force-unlock',
    SLOW,
    async () => {
      const c = make(
        'locked',
        { files: { 'main.tf': 'resource "terraform_data" "x" {\n  input = "a"\n}\n' } },
        { scenario: scenario('{ state: locked }') },
      );
      if (real) {
        applyDirectly(c);
        // `terraform console` holds the state lock for as long as its input stays open.
        const holder = spawn(tool.tool, ['console', '-no-color'], {
          cwd: c.dir,
          env: { PATH: tool.path, HOME: c.root, CHECKPOINT_DISABLE: '1' },
          stdio: ['pipe', 'ignore', 'ignore'],
        });
        children.push(holder);
        const lockInfo = join(c.dir, '.terraform.tfstate.lock.info');
        for (let i = 0; i < 600 && !existsSync(lockInfo) && holder.exitCode === null; i++)
          await new Promise((res) => setTimeout(res, 50));
        expect(existsSync(lockInfo)).toBe(true);
      }
      const r = await c.plan();
      expect(r.summary).toMatchObject({ status: 'locked', reason: 'state-locked', exitCode: 1 });
      expect(r.summary.errorExcerpt).toContain('Error acquiring the state lock');
      // Terraform's Lock Info is kept, and carried as the run's lock (decision 555).
      const id = r.summary.lock?.id ?? '';
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      expect(r.summary.errorExcerpt).toContain(`ID:        ${id}`);
      expect(r.summary.lock?.who).toMatch(/@/);
      expect(r.lockedStreak).toBe(1);
    },
  );

  it('fails a variable validation rule without quoting the value', SLOW, async () => {
    const variable =
      'variable "size" {\n  type = string\n  validation {\n    condition     = length(var.size) < 5\n    error_message = "The size must be short."\n  }\n}\n';
    const c = make(
      'validation',
      {
        files: {
          'main.tf': `${variable}resource "terraform_data" "x" {\n  input = var.size\n}\n`,
          'terraform.tfvars': 'size = "much-too-long-value"\n',
        },
      },
      { scenario: scenario('{ state: invalid-variable, variant: 1 }') },
    );
    const r = await c.plan();
    expect(r.summary).toMatchObject({ status: 'failed', reason: 'exit-1', exitCode: 1 });
    expect(r.summary.errorExcerpt).toContain('Invalid value for variable');
    if (real) expect(JSON.stringify(r.summary)).not.toContain('much-too-long-value');
  });

  for (const [name, files, words] of [
    ['a syntax error', { 'main.tf': 'resource "terraform_data" "x" {\n  input = \n' }, /Error: /],
    [
      'a missing variable',
      { 'main.tf': 'variable "region" {\n  type = string\n}\noutput "r" {\n  value = var.region\n}\n' },
      /No value for required variable/,
    ],
    [
      'a failed precondition',
      {
        'main.tf':
          'variable "n" {\n  default = 1\n}\nresource "terraform_data" "x" {\n  input = "a"\n  lifecycle {\n    precondition {\n      condition     = var.n == 2\n      error_message = "Never true."\n    }\n  }\n}\n',
      },
      /precondition failed/i,
    ],
  ] as const) {
    realOnly(`fails ${name} with exit 1 and an excerpt`, `${name}: it reads no HCL`);
    if (real)
      it(`fails ${name} with exit 1 and an excerpt`, SLOW, async () => {
        const c = make(name, { files: { ...files } }, {});
        const r = await c.plan();
        expect(r.summary).toMatchObject({ status: 'failed', reason: 'exit-1', exitCode: 1 });
        expect(r.summary.errorExcerpt).toMatch(words);
      });
  }

  realOnly('plans through a warning', 'warnings');
  if (real)
    it('plans through a warning', SLOW, async () => {
      const c = make(
        'warning',
        { files: { 'main.tf': PROVIDER + obj('a', { name: 'warn-a' }) }, component: init },
        {},
      );
      const r = await c.plan();
      expect(r.summary).toMatchObject({ status: 'changes', exitCode: 2 });
    });

  realOnly('inits offline with a local and a git::file:// module', 'modules');
  if (real)
    it('inits offline with a local and a git::file:// module', SLOW, async () => {
      const module = PROVIDER + obj('m');
      const c = make('modules', { files: { 'modules/local/main.tf': module }, component: init }, {});
      const repo = gitRepo(join(c.root, 'mod-repo'), { 'main.tf': module.replace('"m"', '"g"') });
      writeFileSync(
        join(c.dir, 'main.tf'),
        `${PROVIDER}module "local" {\n  source = "./modules/local"\n}\nmodule "remote" {\n  source = "git::file://${repo}"\n}\n`,
      );
      const r = await c.plan();
      expect(r.summary).toMatchObject({ status: 'changes', exitCode: 2, counts: { add: 2 } });
      expect(r.summary.resources?.map((x) => x.address).sort()).toEqual([
        'module.local.driftline_object.m',
        'module.remote.driftline_object.g',
      ]);
    });

  it(
    'is blocked before init on a locked provider the mirror lacks, naming the exact build',
    SLOW,
    async () => {
      const lock =
        '# This file is maintained automatically by "terraform init".\n\nprovider "registry.terraform.io/driftline/testobj" {\n  version     = "0.2.0"\n  constraints = "0.2.0"\n  hashes = [\n    "h1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",\n  ]\n}\n';
      const files = { '.terraform.lock.hcl': lock };
      const c = make(
        'missing-locked',
        { files: { ...files, 'main.tf': PROVIDER.replace('0.1.0', '0.2.0') + obj('a') }, component: init },
        { files, scenario: scenario('{ state: changes }'), component: init },
      );
      const r = await c.plan();
      expect(r.summary).toMatchObject({
        status: 'blocked',
        reason: 'providers-missing',
        needs: ['registry.terraform.io/driftline/testobj 0.2.0 linux_amd64'],
      });
    },
  );

  it('is blocked when init finds no provider in the mirror, naming it', SLOW, async () => {
    const c = make(
      'missing-provider',
      {
        files: {
          'main.tf':
            'terraform {\n  required_providers {\n    absent = { source = "driftline/absent", version = "1.0.0" }\n  }\n}\n',
        },
        component: init,
      },
      {
        scenario: 'providers: ["driftline/absent 1.0.0"]\nsteps:\n  - { state: changes }\n',
        component: init,
      },
    );
    const r = await c.plan();
    expect(r.summary).toMatchObject({
      status: 'blocked',
      reason: 'providers-missing',
      needs: ['registry.terraform.io/driftline/absent'],
    });
  });

  it('is blocked on a module it cannot fetch offline, naming its source', SLOW, async () => {
    const net = 'git::file:///nonexistent/driftline-net.git?ref=v1.2.0';
    const web = 'git::http://127.0.0.1:9/web.git';
    const c = make(
      'module-missing',
      {
        files: {
          'main.tf': `module "net" {\n  source = "${net}"\n}\nmodule "web" {\n  source = "${web}"\n}\n`,
        },
        component: init,
      },
      {
        scenario: `modules: [{ name: net, source: "${net}" }, { name: web, source: "${web}" }]\nsteps: [{ state: changes }]\n`,
        component: init,
      },
    );
    const r = await c.plan();
    expect(r.summary).toMatchObject({ status: 'blocked', reason: 'modules-missing' });
    expect([...(r.summary.needs ?? [])].sort()).toEqual([`module ${net}`, `module ${web}`]);
  });

  it('applies a saved plan, and the next plan is clean', SLOW, async () => {
    const c = make(
      'apply',
      { files: { 'main.tf': PROVIDER + obj('a') }, component: init },
      { scenario: scenario('{ state: changes, runs: 3 }'), component: init },
    );
    const planned = await c.plan();
    expect(planned.summary.status).toBe('changes');
    const a = await c.apply(planned);
    expect(a).toMatchObject({ state: 'applied' });
    if (real) expect(Object.values(c.objects().objects).map((o) => o.name)).toEqual(['a']);
    const next = await c.plan();
    expect(next.summary).toMatchObject({ status: 'clean', exitCode: 0 });
  });

  it('refuses a stale saved plan (stale-plan) and changes nothing', SLOW, async () => {
    const c = make(
      'stale',
      { files: { 'main.tf': PROVIDER + obj('a') }, component: init },
      { scenario: scenario('{ state: changes, runs: 3 }'), component: init },
    );
    if (real) applyDirectly(c);
    if (real) writeFileSync(join(c.dir, 'main.tf'), PROVIDER + obj('a', { shape: 'square' }));
    const planned = await c.plan();
    expect(planned.summary.status).toBe('changes');
    // Another operation changes the state after the plan was made.
    if (real) {
      const r = c.tf('apply', '-input=false', '-no-color', '-auto-approve');
      expect(r.status).toBe(0);
    } else {
      const stateFile = join(c.dir, '.fake-terraform', 'state.json');
      const s = existsSync(stateFile) ? JSON.parse(readFileSync(stateFile, 'utf8')) : { serial: 0 };
      writeFileSync(stateFile, JSON.stringify({ ...s, serial: (s.serial ?? 0) + 5 }));
    }
    const before = real ? JSON.stringify(c.objects()) : '';
    const a = await c.apply(planned);
    expect(a).toMatchObject({ state: 'apply-failed', reason: 'stale-plan' });
    expect(a.errorExcerpt).toContain('Saved plan is stale');
    if (real) expect(JSON.stringify(c.objects())).toBe(before);
  });

  it('reports an apply that fails mid-way as apply-failed, keeping what was done', SLOW, async () => {
    const c = make(
      'apply-error',
      { files: { 'main.tf': PROVIDER + obj('a') + obj('b') }, component: init },
      { scenario: scenario('{ state: apply-error, runs: 3 }'), component: init },
    );
    if (real) c.editObjects((o) => (o.failApply = ['b']));
    const planned = await c.plan();
    expect(planned.summary.status).toBe('changes');
    const a = await c.apply(planned);
    expect(a).toMatchObject({ state: 'apply-failed', reason: 'exit-1' });
    expect(a.errorExcerpt?.length).toBeGreaterThan(0);
    if (real) expect(a.errorExcerpt).toContain('Error: Test API refused the object');
    if (real) {
      expect(Object.values(c.objects().objects).map((o) => o.name)).toEqual(['a']);
      expect(JSON.stringify(a)).not.toContain(SECRET);
    }
  });
}
