import { PlanSummarySchema } from '@driftline/protocol';
import { describe, expect, it } from 'vitest';
import { fixtureJson, fixtureText, PLANTED_SECRETS } from '../../../test/fixtures.js';
import { generatePlan } from '../../../test/genPlan.js';
import { REDACTION_POLICY } from '../redact/maskValues.js';
import { compileRules } from '../redact/rules.js';
import { parsePlanText, type SummariseContext, summarisePlan } from './summarisePlan.js';

const ctx: SummariseContext = {
  component: 'network',
  environment: 'production',
  startedAt: '2024-03-01T10:00:00.000Z',
  finishedAt: '2024-03-01T10:01:00.000Z',
};

function summary(rel: string, c: Partial<SummariseContext> = {}) {
  const r = summarisePlan(fixtureJson(rel), { ...ctx, ...c });
  if (!r.ok) throw new Error(r.message);
  return r;
}

const PLANS = [
  'plans/v0.1-tf0.12.json',
  'plans/v0.2-tf0.15-outputs-only.json',
  'plans/v1.0-tf1.1-drift-only.json',
  'plans/v1.1-tf1.3-replace-moved.json',
  'plans/v1.2-kitchen-sink.json',
  'plans/v1.2-errored.json',
  'plans/v1.2-tofu-clean.json',
];

describe('summarisePlan', () => {
  it('counts as Terraform\'s "Plan:" line does, a replace also being one add and one destroy', () => {
    const s = summary('plans/v1.2-kitchen-sink.json').summary;
    expect(s.status).toBe('changes');
    expect(s.counts).toEqual({ add: 2, change: 2, destroy: 2, replace: 1, import: 1, drift: 1 });
  });

  it('lists attribute paths that change, never values, and stops at sensitive attributes', () => {
    const s = summary('plans/v1.2-kitchen-sink.json', { publicVariables: ['web_colours'] }).summary;
    const byAddr = new Map(s.resources?.filter((r) => !r.drift).map((r) => [r.address, r]));
    expect(byAddr.get('aws_db_instance.main')?.changedAttributes).toEqual([
      'instance_class',
      'password',
      'tags.env',
    ]);
    expect(byAddr.get('kubernetes_secret.app')?.changedAttributes).toEqual([
      'data',
      'metadata[0].labels.tier',
    ]);
    expect(byAddr.get('aws_instance.web["blue"]')).toMatchObject({
      actions: ['delete', 'create'],
      reason: 'replace_because_cannot_update',
      changedAttributes: ['ami', 'id', 'root_block_device[0].volume_id', 'root_block_device[0].volume_size'],
    });
    expect(byAddr.get('module.network.aws_vpc.this[0]')).toMatchObject({
      module: 'module.network',
      changedAttributes: ['arn', 'cidr_block', 'enable_dns_support', 'id', 'tags'],
    });
    expect(byAddr.get('aws_iam_role.deployer')?.previousAddress).toBe('aws_iam_role.ci');
    expect(byAddr.get('aws_s3_bucket.logs')?.importing).toBe(true);
    expect(byAddr.has('aws_route53_record.www')).toBe(false);
  });

  it('keeps drift apart from proposed changes', () => {
    const s = summary('plans/v1.2-kitchen-sink.json').summary;
    const drift = s.resources?.filter((r) => r.drift) ?? [];
    expect(drift.map((r) => r.address)).toEqual(['aws_security_group.legacy']);
    expect(drift[0]?.changedAttributes).toEqual(['ingress[0].cidr_blocks[0]', 'tags.owner']);
  });

  it('reports drift when the plan proposes nothing but resources drifted', () => {
    const s = summary('plans/v1.0-tf1.1-drift-only.json').summary;
    expect(s.status).toBe('drift');
    expect(s.counts).toEqual({ add: 0, change: 0, destroy: 0, replace: 0, import: 0, drift: 2 });
  });

  it('counts root output changes alone as changes from Terraform 0.14 on', () => {
    const s = summary('plans/v0.2-tf0.15-outputs-only.json').summary;
    expect(s.status).toBe('changes');
    expect(s.outputChanges).toEqual(['name']);
  });

  it('ignores the create of every output that Terraform 0.12 lists', () => {
    const s = summary('terraform-json/no_changes.plan.json').summary;
    expect(s.status).toBe('clean');
    expect(s.outputChanges).toEqual([]);
    expect(s.formatVersion).toBe('0.1');
  });

  it("reads HashiCorp's format 0.1 test plans", () => {
    const s = summary('terraform-json/basic.plan.json').summary;
    expect(s.status).toBe('changes');
    expect(s.terraformVersion).toBe('0.12.6');
    expect(s.counts?.add).toBe(7);
    expect(s.resources?.find((r) => r.address === 'data.null_data_source.baz')?.actions).toEqual(['read']);
  });

  it('marks an errored plan failed and keeps errored/applyable/complete', () => {
    const s = summary('plans/v1.2-errored.json').summary;
    expect(s).toMatchObject({
      status: 'failed',
      reason: 'plan-errored',
      errored: true,
      applyable: false,
      complete: false,
    });
  });

  it('keeps for_each keys of public variables in addresses and replaces map keys that are not attribute names in paths', () => {
    const s = summary('plans/v1.1-tf1.3-replace-moved.json', { publicVariables: ['zones'] }).summary;
    expect(s.resources?.[0]?.address).toBe('aws_subnet.az["eu-west-1a"]');
    expect(s.resources?.[1]?.changedAttributes).toEqual(['idle_timeout', 'tags[<key>]']);
    expect(s.resources?.[1]?.previousAddress).toBe('aws_lb.api');
  });

  it.each(PLANS)('lets no planted secret out of %s and validates against PlanSummarySchema', (rel) => {
    const r = summary(rel);
    expect(PlanSummarySchema.safeParse(r.summary).success).toBe(true);
    const text = JSON.stringify(r.summary) + (r.canonical ?? '');
    for (const secret of PLANTED_SECRETS) expect(text).not.toContain(secret);
  });

  it('gives equal plans equal hashes whatever the times, and different plans different ones', () => {
    const a = summary('plans/v1.2-kitchen-sink.json').summary;
    const b = summary('plans/v1.2-kitchen-sink.json', {
      startedAt: '2025-01-01T00:00:00.000Z',
      finishedAt: '2025-01-01T00:00:01.000Z',
    }).summary;
    const c = summary('plans/v1.0-tf1.1-drift-only.json').summary;
    expect(a.planHash).toMatch(/^[0-9a-f]{64}$/);
    expect(b.planHash).toBe(a.planHash);
    expect(c.planHash).not.toBe(a.planHash);
  });

  it('fails closed when a variable value would leave in an address, naming the rule only', () => {
    const plan = fixtureJson('plans/v1.0-tf1.1-drift-only.json') as Record<string, unknown>;
    plan.variables = { leak: { value: 'aws_security_group.ed' } };
    const r = summarisePlan(plan, ctx);
    expect(r.ok && r.summary).toEqual({
      ...ctx,
      status: 'redaction-failed',
      reason: 'known-value-variable',
      redactionPolicy: REDACTION_POLICY,
    });
    expect(r.ok && r.redactionHit).toBe('known-value-variable');
  });

  it('fails closed on a sensitive value even when it equals a for_each key', () => {
    const plan = fixtureJson('plans/v1.1-tf1.3-replace-moved.json') as Record<string, unknown>;
    const rc = (plan.resource_changes as Record<string, Record<string, unknown>>[])[0]!;
    rc.change = {
      ...(rc.change as object),
      after: { secret: 'eu-west-1a' },
      after_sensitive: { secret: true },
    };
    expect(summarisePlan(plan, { ...ctx, publicVariables: ['zones'] })).toMatchObject({
      ok: true,
      summary: { status: 'redaction-failed', reason: 'known-value-sensitive-attribute' },
    });
  });

  it('fails closed on a known secret shape and on a configured pattern', () => {
    const plan = fixtureJson('plans/v1.0-tf1.1-drift-only.json') as Record<string, Record<string, unknown>[]>;
    (plan.resource_drift![0] as Record<string, unknown>).address = 'aws_security_group.AKIAABCDEFGHIJKLMNOP';
    expect(summarisePlan(plan, ctx)).toMatchObject({ ok: true, summary: { reason: 'aws-access-key-id' } });
    const custom = summarisePlan(fixtureJson('plans/v1.0-tf1.1-drift-only.json'), {
      ...ctx,
      rules: compileRules([{ name: 'corp', regex: 'security_group\\.edge' }]),
    });
    expect(custom).toMatchObject({
      ok: true,
      summary: { status: 'redaction-failed', reason: 'custom-corp' },
    });
  });

  it('treats configured attribute names as sensitive', () => {
    const s = summary('plans/v1.2-kitchen-sink.json', { sensitiveAttributes: ['labels'] }).summary;
    const app = s.resources?.find((r) => r.address === 'kubernetes_secret.app');
    expect(app?.changedAttributes).toEqual(['data', 'metadata[0].labels']);
  });

  it('refuses an unknown major format_version and JSON that is not a plan', () => {
    expect(summarisePlan(fixtureJson('plans/v2.0-future.json'), ctx)).toMatchObject({
      ok: false,
      reason: 'unsupported-format',
    });
    expect(summarisePlan(fixtureJson('plans/state-not-a-plan.json'), ctx)).toMatchObject({
      ok: false,
      reason: 'not-a-plan',
    });
    expect(summarisePlan([1, 2], ctx)).toMatchObject({ ok: false, reason: 'not-a-plan' });
    expect(summarisePlan({ format_version: '1.2', resource_changes: 'x' }, ctx)).toMatchObject({
      ok: false,
      reason: 'not-a-plan',
    });
  });

  it('says a truncated plan is truncated and never echoes the input', () => {
    const text = fixtureText('plans/v1.2-kitchen-sink.json');
    const cut = parsePlanText(text.slice(0, 2000));
    expect(cut).toMatchObject({ ok: false, message: expect.stringContaining('truncated') });
    const garbage = parsePlanText('{"password": hunter2-leaks}');
    expect(garbage.ok).toBe(false);
    expect(JSON.stringify(garbage)).not.toContain('hunter2');
    expect(parsePlanText('not json at all')).toMatchObject({ ok: false, reason: 'not-a-plan' });
  });

  it('summarises a plan of 10,000 resources with every sensitive value kept in', () => {
    const r = summarisePlan(generatePlan(10_000), ctx);
    expect(r.ok && r.summary.status).toBe('changes');
    expect(r.ok && r.summary.counts).toEqual({
      add: 4000,
      change: 2000,
      destroy: 4000,
      replace: 2000,
      import: 0,
      drift: 200,
    });
    expect(r.ok && r.summary.resources).toHaveLength(8000 + 200);
    expect(JSON.stringify(r)).not.toContain('-secret');
  });
});
