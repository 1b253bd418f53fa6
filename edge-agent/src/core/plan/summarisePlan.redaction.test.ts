import { describe, expect, it } from 'vitest';
import { decodeText } from '../redact/decode.js';
import { REDACTION_POLICY } from '../redact/maskValues.js';
import { type SummariseContext, summarisePlan } from './summarisePlan.js';

const ctx: SummariseContext = {
  component: 'network',
  environment: 'production',
  startedAt: '2024-03-01T10:00:00.000Z',
  finishedAt: '2024-03-01T10:01:00.000Z',
};

const SECRET = 'Vault-Pa55word-q7Zr';

function plan(resource: Record<string, unknown>, variables: Record<string, unknown> = {}) {
  return {
    format_version: '1.2',
    terraform_version: '1.9.8',
    variables: Object.fromEntries(Object.entries(variables).map(([k, v]) => [k, { value: v }])),
    planned_values: { root_module: {} },
    resource_changes: [
      {
        mode: 'managed',
        provider_name: 'registry.terraform.io/hashicorp/aws',
        change: { actions: ['update'], before: { ami: 'a' }, after: { ami: 'b' } },
        ...resource,
      },
    ],
  };
}

const run = (p: unknown) => {
  const r = summarisePlan(p, ctx);
  if (!r.ok) throw new Error(r.message);
  return r;
};

describe('summarisePlan: the plan identifiers are not leaks', () => {
  it.each([
    ['a value inside a resource name', { ami: 'primary' }],
    ['a value equal to a resource type', { kind: 'aws_instance' }],
    ['a value inside an attribute name', { attr: 'instance_type' }],
    ['a value that is an instance key', { zone: 'eu-west-1a' }],
    ['a capitalised value inside a name', { label: 'Primary' }],
    ['a map variable keyed by attribute-shaped names', { tags: { owner: 'ops', instance_type: 'x' } }],
  ])('does not withhold a clean plan for %s', (_, variables) => {
    const r = run(
      plan(
        {
          address: 'aws_instance.test_primary["eu-west-1a"]',
          type: 'aws_instance',
          name: 'test_primary',
          index: 'eu-west-1a',
          change: {
            actions: ['update'],
            before: { instance_type: 't3.small', tags: { owner: 'a' } },
            after: { instance_type: 't3.large', tags: { owner: 'b' } },
          },
        },
        variables,
      ),
    );
    expect(r.redactionHit).toBeUndefined();
    expect(r.summary.status).toBe('changes');
  });
});

describe('summarisePlan: values leave in no form', () => {
  const SPACED = 'Vault/Pa55 word+q7Zr';
  const sensitive = (p: ReturnType<typeof plan>) => ({
    ...p,
    configuration: {
      root_module: { variables: { password: { sensitive: true }, pin: { sensitive: true } } },
    },
  });
  const leakyKey = (key: string, value: unknown = SPACED) =>
    plan(
      { address: `aws_s3_bucket.logs["${key}"]`, type: 'aws_s3_bucket', name: 'logs' },
      { password: value },
    );

  /** Whether the value can be read back from the result in any of the forms the tests use. */
  const readable = (r: unknown, value: string) => {
    const text = decodeText(JSON.stringify(r)).toLowerCase();
    return [value, Buffer.from(value).toString('base64'), Buffer.from(value).toString('hex')].some((f) =>
      text.includes(f.toLowerCase()),
    );
  };

  it.each([
    ['as is', SPACED],
    ['lower-cased', SPACED.toLowerCase()],
    ['upper-cased', SPACED.toUpperCase()],
    ['base64', Buffer.from(SPACED).toString('base64')],
    ['base64url inside a longer string', Buffer.from(`ab${SPACED}`).toString('base64url')],
    ['hex', Buffer.from(SPACED).toString('hex')],
    ['URL-encoded', encodeURIComponent(SPACED)],
    ['with + for spaces', SPACED.replaceAll(' ', '+')],
    ['JSON-escaped', SPACED.replace('/', '\\/').replace('V', '\\u0056')],
  ])('masks a sensitive variable in an instance key %s, without withholding the plan', (_, key) => {
    const r = run(sensitive(leakyKey(key)));
    expect(r.summary.status).toBe('changes');
    expect(r.summary.resources?.[0]?.address).toMatch(
      /^aws_s3_bucket\.logs\["\u27E8password:[0-9a-f]{6}\u27E9"\]$/,
    );
    expect(readable(r, SPACED)).toBe(false);
  });

  it.each([
    ['a resource name', (v: string) => ({ address: `aws_s3_bucket.${v}`, type: 'aws_s3_bucket', name: v })],
    [
      'a map key of an attribute',
      (v: string) => ({
        address: 'aws_s3_bucket.logs',
        type: 'aws_s3_bucket',
        name: 'logs',
        change: { actions: ['update'], before: { tags: {} }, after: { tags: { [v]: 'x' } } },
      }),
    ],
  ])(
    'fails closed on a sensitive value the plan puts into %s (names are the plan’s, not trusted)',
    (_, at) => {
      const value = 'correct_horse_battery_staple';
      const r = run(sensitive(plan(at(value), { password: value })));
      expect(r.summary).toEqual({
        ...ctx,
        status: 'redaction-failed',
        reason: 'known-value-sensitive-variable',
        redactionPolicy: REDACTION_POLICY,
      });
    },
  );

  it.each([
    ['base64', Buffer.from(SPACED).toString('base64')],
    ['hex', Buffer.from(SPACED).toString('hex')],
    ['URL-encoded', encodeURIComponent(SPACED)],
  ])('masks a plain variable encoded %s in an instance key', (_, key) => {
    const r = run(leakyKey(key));
    expect(r.summary.status).toBe('changes');
    expect(readable(r, SPACED)).toBe(false);
  });

  it('lets a public variable be an instance key as it is', () => {
    const r = summarisePlan(leakyKey('eu-west-1a', 'eu-west-1a'), { ...ctx, publicVariables: ['password'] });
    expect(r.ok && r.summary.resources?.[0]?.address).toBe('aws_s3_bucket.logs["eu-west-1a"]');
  });

  it('masks a secret PIN written as a number', () => {
    const p = plan({ address: 'aws_x.pin[48213907]', type: 'aws_x', name: 'pin' }, { pin: 48213907 });
    const r = run(sensitive(p));
    expect(r.summary.status).toBe('changes');
    expect(JSON.stringify(r)).not.toContain('48213907');
  });

  it('never copies a map key of tags or drift into a path', () => {
    const p = plan({
      address: 'aws_s3_bucket.logs',
      type: 'aws_s3_bucket',
      name: 'logs',
      change: {
        actions: ['update'],
        before: { tags: { [SECRET]: 'x' } },
        after: { tags: { [SECRET]: 'y' } },
      },
    });
    const r = run(p);
    expect(r.summary.resources?.[0]?.changedAttributes).toEqual(['tags[<key>]']);
    expect(JSON.stringify(r)).not.toContain(SECRET);
  });
});

describe('summarisePlan: enumerated fields', () => {
  it('passes documented action_reason and actions, and says unknown for anything else', () => {
    const p = {
      format_version: '1.2',
      planned_values: {},
      resource_changes: [
        {
          address: 'a.b',
          type: 'a',
          action_reason: 'replace_because_tainted',
          change: { actions: ['delete', 'create'] },
        },
        { address: 'a.c', type: 'a', action_reason: 'because_hunter2', change: { actions: ['update'] } },
        { address: 'a.d', type: 'a', action_reason: 42, change: { actions: ['explode-hunter2'] } },
        { address: 'a.e', type: 'a', change: { actions: ['update'] } },
      ],
    };
    const rs = run(p).summary.resources ?? [];
    expect(rs.map((r) => [r.reason, r.actions])).toEqual([
      ['replace_because_tainted', ['delete', 'create']],
      ['unknown', ['update']],
      ['unknown', ['unknown']],
      [undefined, ['update']],
    ]);
  });
});

describe('summarisePlan: hostile shapes', () => {
  it('refuses plan JSON nested 5,000 deep, with a reason, instead of overflowing the stack', () => {
    let deep: unknown = 'x';
    for (let i = 0; i < 5000; i++) deep = { a: deep };
    const p = plan({ address: 'a.b', type: 'a', change: { actions: ['update'], before: deep, after: {} } });
    expect(summarisePlan(p, ctx)).toMatchObject({ ok: false, reason: 'plan-too-deep' });
  });

  it('refuses a 100,000-character key, with a reason', () => {
    const p = plan({
      address: 'a.b',
      type: 'a',
      change: { actions: ['update'], before: { tags: { ['k'.repeat(100_000)]: 1 } }, after: {} },
    });
    expect(summarisePlan(p, ctx)).toMatchObject({ ok: false, reason: 'plan-key-too-long' });
  });
});
