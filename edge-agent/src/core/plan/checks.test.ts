import { describe, expect, it } from 'vitest';
import { CHECK_MESSAGE_WITHHELD, summariseChecks } from './checks.js';
import { summarisePlan } from './summarisePlan.js';

const check = (display: string, kind: string, status: string, message?: string) => ({
  address: { kind, to_display: display },
  status,
  instances: [{ address: { to_display: display }, status, ...(message ? { problems: [{ message }] } : {}) }],
});

const ctx = {
  component: 'c',
  environment: 'prod',
  startedAt: '2026-01-01T00:00:00.000Z',
  finishedAt: '2026-01-01T00:00:01.000Z',
};

describe('summariseChecks', () => {
  it('counts pass, fail and unknown, error as fail, failures first', () => {
    const r = summariseChecks([
      check('terraform_data.x', 'resource', 'pass'),
      check('check.health', 'check', 'fail', 'n is 1'),
      check('output.url', 'output_value', 'unknown'),
      check('check.broken', 'check', 'error'),
    ]);
    expect(r).toMatchObject({ pass: 1, fail: 2, unknown: 1 });
    expect(r?.items.map((i) => [i.address, i.status, i.errored ?? false])).toEqual([
      ['check.broken', 'fail', true],
      ['check.health', 'fail', false],
      ['output.url', 'unknown', false],
      ['terraform_data.x', 'pass', false],
    ]);
  });

  it('drops the author-written message unless kept, and withholds a kept one that quotes a value', () => {
    const raw = [
      check('check.a', 'check', 'fail', 'token is hunter2-secret'),
      check('check.b', 'check', 'fail', 'fine text'),
    ];
    expect(summariseChecks(raw)?.items.every((i) => i.message === undefined)).toBe(true);
    const kept = summariseChecks(raw, {
      keepCustomMessages: true,
      secrets: [{ value: 'hunter2-secret', source: 'env' }],
    });
    expect(kept?.items.map((i) => i.message)).toEqual([CHECK_MESSAGE_WITHHELD, 'fine text']);
  });

  it('is absent from a plan without checks, and a failing check does not make a clean plan anything but clean', () => {
    const plan = { format_version: '1.2', resource_changes: [] };
    const a = summarisePlan(plan, ctx);
    expect(a.ok && a.summary.checks).toBeUndefined();
    const b = summarisePlan({ ...plan, checks: [check('check.health', 'check', 'fail', 'x')] }, ctx);
    expect(b.ok && b.summary).toMatchObject({ status: 'clean', checks: { fail: 1, pass: 0, unknown: 0 } });
    expect(b.ok && a.ok && b.summary.planHash !== a.summary.planHash).toBe(true);
  });

  it('masks a variable value in a check address', () => {
    const plan = {
      format_version: '1.2',
      variables: { team: { value: 'payments-team' } },
      resource_changes: [],
      checks: [check('terraform_data.x["payments-team"]', 'resource', 'pass')],
    };
    const r = summarisePlan(plan, ctx);
    expect(r.ok && r.summary.status).toBe('clean');
    expect(JSON.stringify(r)).not.toContain('payments-team');
  });
});
