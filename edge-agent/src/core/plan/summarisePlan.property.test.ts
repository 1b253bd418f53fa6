import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { summarisePlan } from './summarisePlan.js';

// Values drawn from an alphabet that no address, type or attribute name in these plans uses (digits
// and upper case after a marker), so any appearance in the output is a copied value.
const secret = fc.stringMatching(/^Q[A-Z0-9]{5,12}$/);
const value: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  v: fc.oneof(
    { depthSize: 'small' },
    secret,
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('v'), { maxLength: 3 }),
    fc.dictionary(fc.stringMatching(/^[a-z]{1,6}$/), tie('v'), { maxKeys: 3 }),
  ),
})).v;
const attrs = fc.dictionary(fc.stringMatching(/^[a-z_]{1,8}$/), value, { maxKeys: 5 });
const actions = fc.constantFrom(
  ['create'],
  ['update'],
  ['delete'],
  ['delete', 'create'],
  ['create', 'delete'],
  ['no-op'],
  ['read'],
);

const plan = fc.record({
  format_version: fc.constantFrom('0.1', '0.2', '1.0', '1.1', '1.2'),
  terraform_version: fc.constantFrom('0.12.31', '0.15.5', '1.1.9', '1.6.6'),
  variables: fc.dictionary(
    fc.stringMatching(/^[a-z]{1,6}$/),
    value.map((v) => ({ value: v })),
    { maxKeys: 3 },
  ),
  planned_values: fc.constant({ root_module: {} }),
  resource_changes: fc.array(
    fc.record({
      address: fc.integer({ min: 0, max: 999 }).map((i) => `aws_thing.r${i}`),
      type: fc.constant('aws_thing'),
      name: fc.constant('r'),
      provider_name: fc.constant('registry.terraform.io/hashicorp/aws'),
      change: fc.record({
        actions,
        before: attrs,
        after: attrs,
        after_sensitive: fc.oneof(fc.constant({}), fc.constant(true)),
      }),
    }),
    { maxLength: 8 },
  ),
  resource_drift: fc.array(
    fc.record({
      address: fc.constant('aws_thing.d'),
      type: fc.constant('aws_thing'),
      change: fc.record({ actions: fc.constant(['update']), before: attrs, after: attrs }),
    }),
    { maxLength: 2 },
  ),
  output_changes: fc.dictionary(
    fc.stringMatching(/^[a-z]{1,6}$/),
    fc.record({ actions: fc.constant(['update']), before: value, after: value }),
  ),
});

function strings(v: unknown, out: string[] = []): string[] {
  if (typeof v === 'string') out.push(v);
  else if (Array.isArray(v)) for (const x of v) strings(x, out);
  else if (v && typeof v === 'object') for (const x of Object.values(v)) strings(x, out);
  return out;
}

describe('summarisePlan (property)', () => {
  it('never copies a value of a plan into its summary, whatever the plan holds', () => {
    fc.assert(
      fc.property(plan, (p) => {
        const r = summarisePlan(p, {
          component: 'c',
          environment: 'e',
          startedAt: '2024-01-01T00:00:00.000Z',
          finishedAt: '2024-01-01T00:00:00.000Z',
        });
        expect(r.ok).toBe(true);
        const out = JSON.stringify(r);
        for (const s of strings([
          p.variables,
          p.resource_changes.map((x) => [x.change.before, x.change.after]),
          p.resource_drift.map((x) => [x.change.before, x.change.after]),
          p.output_changes,
        ])) {
          if (s.startsWith('Q')) expect(out).not.toContain(s);
        }
      }),
      { numRuns: 200, seed: 20240301 },
    );
  });
});
