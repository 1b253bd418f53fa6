import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fixtureJson, fixturePlanFiles } from '../../../test/fixtures.js';
import { generatePlan } from '../../../test/genPlan.js';
import { decodeText } from '../redact/decode.js';
import { type SummariseContext, summarisePlan } from './summarisePlan.js';

const ctx: SummariseContext = {
  component: 'network',
  environment: 'production',
  startedAt: '2024-03-01T10:00:00.000Z',
  finishedAt: '2024-03-01T10:01:00.000Z',
};

function outcome(plan: unknown): 'summarised' | 'withheld' | 'refused' {
  const r = summarisePlan(plan, ctx);
  if (!r.ok) return 'refused';
  return r.summary.status === 'redaction-failed' ? 'withheld' : 'summarised';
}

const identifier = fc.stringMatching(/^[a-z][a-z0-9_]{2,10}$/);

/**
 * A clean plan whose values collide with its own identifiers the way real ones do: a variable equal
 * to or inside a resource name, type or attribute name, for_each keys taken from variables, tags keyed
 * by attribute-shaped names, numeric settings equal to count indexes.
 */
const cleanPlan = fc
  .record({
    type: identifier.map((t) => `aws_${t}`),
    name: identifier,
    attrs: fc.uniqueArray(identifier, { minLength: 1, maxLength: 4 }),
    keys: fc.uniqueArray(fc.stringMatching(/^[a-z0-9-]{4,12}$/), { minLength: 1, maxLength: 3 }),
    index: fc.integer({ min: 1000, max: 99_999 }),
    cut: fc.nat(),
  })
  .map(({ type, name, attrs, keys, index, cut }) => {
    const inside = (s: string) => s.slice(cut % Math.max(1, s.length - 4));
    const vals = Object.fromEntries(attrs.map((a, i) => [a, `v${i}`]));
    return {
      format_version: '1.2',
      variables: {
        a: { value: inside(name) },
        b: { value: type },
        c: { value: attrs[0] },
        d: { value: keys },
        e: { value: Object.fromEntries(attrs.map((a) => [a, 'x'])) },
        f: { value: index },
        g: { value: name.toUpperCase() },
      },
      planned_values: {},
      resource_changes: [
        ...keys.map((k) => ({
          address: `${type}.${name}["${k}"]`,
          type,
          name,
          index: k,
          change: {
            actions: ['update'],
            before: { ...vals, tags: vals },
            after: { tags: { ...vals, [attrs[0] as string]: 'changed' } },
          },
        })),
        {
          address: `${type}.${name}_n[${index}]`,
          type,
          name: `${name}_n`,
          index,
          change: { actions: ['create'], after: vals },
        },
      ],
    };
  });

const ENCODINGS: ((s: string) => string)[] = [
  (s) => s,
  (s) => s.toLowerCase(),
  (s) => s.toUpperCase(),
  (s) => Buffer.from(s).toString('base64'),
  (s) => Buffer.from(`q${s}`).toString('base64'),
  (s) => Buffer.from(`qq${s}`).toString('base64url'),
  (s) => Buffer.from(s).toString('hex'),
  (s) => encodeURIComponent(s),
  (s) => JSON.stringify(s).slice(1, -1).replaceAll('a', '\\u0061'),
];

/** A plan carrying a sensitive secret, and one of its encodings where a value could slip out. */
const hostilePlan = fc
  .record({
    secret: fc.stringMatching(/^[A-Za-z0-9/+ =-]{8,24}$/).filter((s) => /[A-Z]/.test(s) && /[0-9]/.test(s)),
    encoding: fc.nat({ max: ENCODINGS.length - 1 }),
    channel: fc.constantFrom('instance-key', 'tags-key', 'drift-key', 'module-key', 'moved-from'),
  })
  .map(({ secret, encoding, channel }) => {
    const enc = (ENCODINGS[encoding] as (s: string) => string)(secret);
    const key = JSON.stringify(enc).slice(1, -1);
    const change = (before: unknown, after: unknown) => ({ actions: ['update'], before, after });
    const rc = {
      address: 'aws_s3_bucket.logs',
      type: 'aws_s3_bucket',
      name: 'logs',
      change: change({ tags: { env: 'a' } }, { tags: { env: 'b' } }),
    } as Record<string, unknown>;
    if (channel === 'instance-key') rc.address = `aws_s3_bucket.logs["${key}"]`;
    if (channel === 'module-key') rc.address = `module.site["${key}"].aws_s3_bucket.logs`;
    if (channel === 'moved-from') rc.previous_address = `aws_s3_bucket.old["${key}"]`;
    if (channel === 'tags-key') rc.change = change({ tags: { [enc]: 'a' } }, { tags: { [enc]: 'b' } });
    const drift =
      channel === 'drift-key' ? [{ ...rc, change: change({ labels: {} }, { labels: { [enc]: 'x' } }) }] : [];
    return {
      secret,
      plan: {
        format_version: '1.2',
        variables: { token: { value: secret } },
        configuration: { root_module: { variables: { token: { sensitive: true } } } },
        planned_values: {},
        resource_changes: [rc],
        resource_drift: drift,
      },
    };
  });

/** Whether the secret can be read back from the summary, in any form the hostile plan used. */
function leaks(summaryJson: string, secret: string): boolean {
  const text = decodeText(summaryJson).toLowerCase();
  return ENCODINGS.some((e) => text.includes(decodeText(e(secret)).toLowerCase()));
}

describe('redaction: false alarms and leaks, measured', () => {
  it('withholds none of the repository plan fixtures, nor a 10,000-resource plan', () => {
    const withheld = fixturePlanFiles().filter((f) => outcome(fixtureJson(f)) === 'withheld');
    expect(withheld).toEqual([]);
    expect(outcome(generatePlan(10_000))).toBe('summarised');
  });

  it('withholds no clean generated plan whose values collide with its identifiers', () => {
    let withheld = 0;
    fc.assert(
      fc.property(cleanPlan, (p) => {
        if (outcome(p) === 'withheld') withheld++;
      }),
      { numRuns: 300, seed: 20240315 },
    );
    expect(withheld).toBe(0);
  });

  it('lets no encoded sensitive value out through keys, addresses or drift', () => {
    let leaked = 0;
    fc.assert(
      fc.property(hostilePlan, ({ secret, plan }) => {
        const r = summarisePlan(plan, ctx);
        if (r.ok && leaks(JSON.stringify(r) + (r.canonical ?? ''), secret)) leaked++;
      }),
      { numRuns: 500, seed: 20240316 },
    );
    expect(leaked).toBe(0);
  });
});
