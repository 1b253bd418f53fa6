import { describe, expect, it } from 'vitest';
import { planOutcome, showOutcome } from './run.js';
import { parseScenario, type Scenario } from './scenario.js';

function scenario(steps: object[], more: object = {}): Scenario {
  const r = parseScenario({ steps, ...more });
  if (!r.ok) throw new Error(r.problems.join('; '));
  return r.scenario;
}

const ctx = (s: Scenario, run = 0, detailedExitcode = true) => ({
  scenario: s,
  run,
  elapsedMs: 0,
  component: 'network',
  environment: 'prod',
  out: 'tf.plan',
  detailedExitcode,
});

// biome-ignore lint/suspicious/noExplicitAny: plan JSON is read field by field
const planOf = (o: { planFile?: string }): any =>
  JSON.parse(showOutcome('tf.plan', o.planFile!, true).stdout);

describe('fake terraform plan', () => {
  it('exits like terraform under -detailed-exitcode: 0 clean, 0 drift only, 2 changes, 1 failed or locked', () => {
    const s = scenario(['clean', 'drift', 'changes', 'failed', 'locked'].map((state) => ({ state })));
    expect([0, 1, 2, 3, 4].map((run) => planOutcome(ctx(s, run)).exitCode)).toEqual([0, 0, 2, 1, 1]);
    expect(planOutcome(ctx(s, 2, false)).exitCode).toBe(0);
  });

  it('writes no plan file when the plan fails, and prints the real lock error text', () => {
    const s = scenario([{ state: 'locked' }]);
    const o = planOutcome(ctx(s));
    expect(o.planFile).toBeUndefined();
    expect(o.stderr).toContain('Error: Error acquiring the state lock');
    expect(o.stderr).toMatch(/Lock Info:\n│ {3}ID: {8}[0-9a-f-]{36}/);
    expect(o.stderr).toContain('Terraform acquires a state lock to protect the state from being written');
  });

  it('gives byte-identical plans for the same state, different ones for another variant or seed', () => {
    const s = scenario([
      { state: 'changes', runs: 2 },
      { state: 'changes', variant: 1 },
    ]);
    const [a, b, c] = [0, 1, 2].map((run) => planOutcome(ctx(s, run)).planFile);
    expect(a).toBe(b);
    expect(c).not.toBe(a);
    const other = planOutcome(ctx(scenario([{ state: 'changes' }], { seed: 2 }))).planFile;
    expect(other).not.toBe(a);
  });

  it('produces format 1.2 plan JSON with modules, count and for_each keys', () => {
    const p = planOf(planOutcome(ctx(scenario([{ state: 'clean' }]))));
    expect(p.format_version).toBe('1.2');
    expect(p.terraform_version).toBe('1.9.8');
    const addrs = p.resource_changes.map((r: { address: string }) => r.address);
    expect(addrs).toContain('aws_instance.web[0]');
    expect(addrs).toContain('module.network.aws_subnet.private["a"]');
    expect(addrs).toContain('module.db.aws_db_instance.main');
    expect(
      p.resource_changes.every((r: { change: { actions: string[] } }) => r.change.actions[0] === 'no-op'),
    ).toBe(true);
    expect(p.resource_drift).toBeUndefined();
    expect(p.applyable).toBe(false);
    expect(p.planned_values.root_module.child_modules.map((m: { address: string }) => m.address)).toEqual([
      'module.db',
      'module.network',
    ]);
    expect(p.prior_state.values.root_module.resources.length).toBeGreaterThan(0);
  });

  it('keeps drift apart from proposed changes in the drift state', () => {
    const p = planOf(planOutcome(ctx(scenario([{ state: 'drift' }]))));
    expect(p.resource_drift.map((r: { address: string }) => r.address)).toEqual([
      'aws_security_group.web',
      'module.db.aws_db_instance.main',
    ]);
    expect(
      p.resource_changes.every((r: { change: { actions: string[] } }) => r.change.actions[0] === 'no-op'),
    ).toBe(true);
    expect(p.relevant_attributes.length).toBe(2);
  });

  it('proposes creates, updates, deletes or replaces, always with a sensitive attribute change', () => {
    const p = planOf(planOutcome(ctx(scenario([{ state: 'changes' }]))));
    const changed = p.resource_changes.filter(
      (r: { change: { actions: string[] } }) => r.change.actions[0] !== 'no-op',
    );
    expect(changed.length).toBeGreaterThanOrEqual(3);
    const db = p.resource_changes.find(
      (r: { address: string }) => r.address === 'module.db.aws_db_instance.main',
    );
    expect(db.change.actions).toEqual(['update']);
    expect(db.change.before_sensitive.password).toBe(true);
    expect(db.change.after_sensitive.password).toBe(true);
    expect(p.output_changes.db_password.actions).toEqual(['update']);
    expect(p.applyable).toBe(true);
  });

  it('carries secrets wherever real plans do: variables, sensitive attributes, provider constants, outputs', () => {
    const p = planOf(planOutcome(ctx(scenario([{ state: 'changes' }]))));
    const dbPassword = p.variables.db_password.value as string;
    const token = p.variables.api_token.value as string;
    expect(token).toMatch(/^ghp_[A-Za-z0-9]{36}$/);
    expect(p.configuration.root_module.variables.db_password.sensitive).toBe(true);
    expect(p.configuration.provider_config.aws.expressions.access_key.constant_value).toMatch(
      /^AKIA[A-Z2-7]{16}$/,
    );
    expect(p.configuration.provider_config.aws.expressions.secret_key.constant_value).toHaveLength(40);
    const text = JSON.stringify(p.prior_state);
    expect(text).toContain(dbPassword);
    expect(text).toContain('BEGIN PRIVATE KEY');
    expect(JSON.stringify(p.resource_changes)).toContain(token); // in user_data, not marked sensitive
    expect(p.prior_state.values.outputs.db_password).toMatchObject({ sensitive: true, value: dbPassword });
  });

  it('grows the plan with extraResources', () => {
    const p = planOf(planOutcome(ctx(scenario([{ state: 'clean' }], { extraResources: 50 }))));
    expect(p.resource_changes.filter((r: { name: string }) => r.name === 'fleet')).toHaveLength(50);
  });

  it('changes every extra resource with extraChanges (new tags under random keys), only in a changes plan', () => {
    type Rc = { name: string; change: { actions: string[]; after: { tags: Record<string, string> } } };
    const fleet = (state: 'clean' | 'changes') =>
      (
        planOf(planOutcome(ctx(scenario([{ state }], { extraResources: 50, extraChanges: true }))))
          .resource_changes as Rc[]
      ).filter((r) => r.name === 'fleet');
    const changed = fleet('changes');
    expect(changed.every((r) => r.change.actions.join() === 'update')).toBe(true);
    const keys = new Set(changed.flatMap((r) => Object.keys(r.change.after.tags)));
    expect(keys.size).toBeGreaterThanOrEqual(200);
    expect(fleet('clean').every((r) => r.change.actions.join() === 'no-op')).toBe(true);
  });
});

describe('fake terraform plan failing a variable validation rule', () => {
  const SECRET = 'correct-horse-battery-staple';
  const varFiles = [
    { path: 'staging.tfvars', text: `# staging\nregion = "eu-north-1"\ndb_password = "${SECRET}"\n` },
  ];
  const failing = (variant = 0) => scenario([{ state: 'invalid-variable', variant }]);

  it('quotes the offending -var-file line and the value on stderr, as Terraform does', () => {
    const o = planOutcome({ ...ctx(failing()), varFiles });
    expect(o.exitCode).toBe(1);
    expect(o.planFile).toBeUndefined();
    expect(o.stderr).toContain('│ Error: Invalid value for variable');
    expect(o.stderr).toContain('│   on staging.tfvars line 2:');
    expect(o.stderr).toContain('│   2: region = "eu-north-1"');
    expect(o.stderr).toContain('│    │ var.region is "eu-north-1"');
    expect(o.stderr).toContain('This was checked by the validation rule at variables.tf:4,3-13.');
  });

  it('reports the site password from variables.tf when no var file is given, and quotes it in the message in variant 1', () => {
    const o = planOutcome(ctx(failing(1)));
    const password = /var\.db_password is "([^"]+)"/.exec(o.stderr)?.[1] ?? '';
    expect(password.length).toBeGreaterThan(10);
    expect(o.stderr).toContain(`│ The value ${password} for db_password is not allowed in this environment.`);
  });

  it('gives the same error as a -json diagnostic on stdout, with the value in the snippet', () => {
    const secretFirst = [{ path: 'secrets.tfvars', text: `db_password = "${SECRET}"\n` }];
    const o = planOutcome({ ...ctx(failing()), json: true, varFiles: secretFirst });
    expect(o.exitCode).toBe(1);
    expect(o.stderr).toBe('');
    const [version, diag] = o.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(version).toMatchObject({ type: 'version', terraform: '1.9.8' });
    expect(diag).toMatchObject({
      type: 'diagnostic',
      '@level': 'error',
      diagnostic: {
        severity: 'error',
        summary: 'Invalid value for variable',
        range: { filename: 'secrets.tfvars', start: { line: 1 } },
        snippet: {
          code: `db_password = "${SECRET}"`,
          values: [{ traversal: 'var.db_password', statement: `is "${SECRET}"` }],
        },
      },
    });
  });

  it('prints a lock error and a plan as JSON lines under -json too', () => {
    const locked = planOutcome({ ...ctx(scenario([{ state: 'locked' }])), json: true });
    expect(JSON.parse(locked.stdout.trim().split('\n')[1] as string).diagnostic.summary).toBe(
      'Error acquiring the state lock',
    );
    const changes = planOutcome({ ...ctx(scenario([{ state: 'changes' }])), json: true });
    expect(changes.exitCode).toBe(2);
    expect(JSON.parse(changes.stdout.trim().split('\n')[1] as string)).toMatchObject({
      type: 'change_summary',
    });
  });
});

describe('fake terraform plan of checked-out content', () => {
  it('plans differently when the configuration differs, the same when it does not', () => {
    const s = scenario([{ state: 'changes' }]);
    const main = planOutcome({ ...ctx(s), configDigest: 17 }).planFile;
    expect(planOutcome({ ...ctx(s), configDigest: 17 }).planFile).toBe(main);
    expect(planOutcome({ ...ctx(s), configDigest: 4242 }).planFile).not.toBe(main);
  });

  it('stops before planning on a preflight error, in text and in -json', () => {
    const s = scenario([{ state: 'changes' }]);
    const err = '╷\n│ Error: Required plugins are not installed\n│ \n│ run terraform init\n╵\n';
    const o = planOutcome({ ...ctx(s), preflightError: err });
    expect(o).toMatchObject({ exitCode: 1, stderr: err, state: 'init-required' });
    expect(o.planFile).toBeUndefined();
    const j = planOutcome({ ...ctx(s), json: true, preflightError: err });
    expect(JSON.parse(j.stdout.trim().split('\n')[1] as string).diagnostic.summary).toBe(
      'Required plugins are not installed',
    );
  });
});

describe('fake terraform show', () => {
  it("answers Terraform's error for a file that is not a plan", () => {
    const o = showOutcome('nope.plan', 'garbage', true);
    expect(o.exitCode).toBe(1);
    expect(o.stderr).toContain('Failed to read the given file as a state or plan file');
    expect(showOutcome('gone.plan', null, true).stderr).toContain('no such file');
  });
});
