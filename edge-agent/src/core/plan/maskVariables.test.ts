import { describe, expect, it } from 'vitest';
import { fixtureJson, fixturePlanFiles } from '../../../test/fixtures.js';
import { hmacFingerprint, REDACTION_POLICY } from '../redact/maskValues.js';
import { type SummariseContext, summarisePlan } from './summarisePlan.js';

const ctx: SummariseContext = {
  component: 'iam',
  environment: 'prod',
  startedAt: '2024-03-01T10:00:00.000Z',
  finishedAt: '2024-03-01T10:01:00.000Z',
  fingerprint: hmacFingerprint(new Uint8Array(32).fill(7)),
};

/** A variable nobody marked sensitive, the case redaction exists for. */
const CANARY = 'Canary7Qx9Lm2Vw';

function plan(variables: Record<string, unknown>, rc: Record<string, unknown>[]) {
  return {
    format_version: '1.2',
    terraform_version: '1.11.4',
    variables: Object.fromEntries(Object.entries(variables).map(([k, v]) => [k, { value: v }])),
    planned_values: {},
    resource_changes: rc.map((r) => ({
      mode: 'managed',
      type: 'aws_iam_user',
      name: 'u',
      provider_name: 'registry.terraform.io/hashicorp/aws',
      change: { actions: ['create'], before: null, after: { name: 'x' } },
      ...r,
    })),
  };
}

const summarise = (p: unknown, c: Partial<SummariseContext> = {}) => {
  const r = summarisePlan(p, { ...ctx, ...c });
  if (!r.ok) throw new Error(r.message);
  expect(r.summary.status).not.toBe('redaction-failed');
  return r;
};

/** The canary in every form a test plants it, folded the same way the masking folds. */
function leaks(r: unknown, canary: string): boolean {
  const text = JSON.stringify(r)
    .replaceAll(/\\u200b|\\t|\\"|\u200b|\t/g, '')
    .toLowerCase();
  return text.includes(canary.toLowerCase());
}

const key = (s: string) => JSON.stringify(s).slice(1, -1);
const TAG = /\u27E8db_password:[0-9a-f]{6}\u27E9/;

describe('every variable value is masked in addresses (decision 210)', () => {
  it.each([
    ['verbatim', CANARY, CANARY],
    ['embedded', `user-${CANARY}`, CANARY],
    ['lower-cased', `user-${CANARY.toLowerCase()}`, CANARY],
    ['quoted', `user-"${CANARY}"`, CANARY],
    ['with a quote inside the value', `a-Canary"7Qx9Lm2Vw`, 'Canary"7Qx9Lm2Vw'],
    ['escaped (\\u escapes)', 'user-\\u0043anary7Qx9Lm2Vw', CANARY],
    ['with a tab in it', `user-Cana\try7Qx9Lm2Vw`, `Cana\try7Qx9Lm2Vw`],
    ['with a zero-width space put in', `user-Cana\u200bry7Qx9Lm2Vw`, CANARY],
    [
      'full-width',
      `user-${[...CANARY].map((c) => String.fromCodePoint(c.codePointAt(0)! + 0xfee0)).join('')}`,
      CANARY,
    ],
    ['URL-encoded', `user-${encodeURIComponent(`${CANARY}/x`)}`, `${CANARY}/x`],
    ['base64', Buffer.from(CANARY).toString('base64'), CANARY],
  ])('masks the value %s inside an instance key', (_, k, value) => {
    const address = `aws_iam_user.u["${k.startsWith('user-\\u') ? k : key(k)}"]`;
    const r = summarise(plan({ db_password: value }, [{ address }]));
    const got = r.summary.resources?.[0]?.address ?? '';
    expect(got).toMatch(TAG);
    expect(leaks(r, CANARY)).toBe(false);
    expect(r.summary.redactionPolicy).toBe(REDACTION_POLICY);
  });

  it('keeps what surrounds the value and Terraform’s spelling of an unmasked key', () => {
    const r = summarise(
      plan({ db_password: CANARY }, [
        { address: `aws_iam_user.u["user-${CANARY}"]` },
        { address: 'aws_iam_user.u["plain"]' },
      ]),
    );
    const [a, b] = r.summary.resources ?? [];
    expect(a?.address).toMatch(/^aws_iam_user\.u\["user-\u27E8db_password:[0-9a-f]{6}\u27E9"\]$/);
    expect(b?.address).toBe('aws_iam_user.u["plain"]');
  });

  it('masks a number, as a count index or inside a key', () => {
    const r = summarise(
      plan({ db_password: 739145620771 }, [
        { address: 'aws_iam_user.u["pin-739145620771"]' },
        { address: 'aws_iam_user.v[739145620771]', name: 'v' },
      ]),
    );
    expect(JSON.stringify(r)).not.toContain('739145620771');
    expect(r.summary.resources?.map((x) => x.address)).toEqual([
      expect.stringMatching(/^aws_iam_user\.u\["pin-\u27E8db_password:[0-9a-f]{6}\u27E9"\]$/),
      expect.stringMatching(/^aws_iam_user\.v\["\u27E8db_password:[0-9a-f]{6}\u27E9"\]$/),
    ]);
  });

  it('masks previous_address and nested module keys', () => {
    const r = summarise(
      plan({ db_password: CANARY, team: { [`team-${CANARY}x`]: 'ops' } }, [
        {
          address: `module.site["a-${CANARY}"].module.inner["k"].aws_iam_user.u["b"]`,
          module_address: `module.site["a-${CANARY}"].module.inner["k"]`,
          previous_address: `aws_iam_user.old["${CANARY}"]`,
          change: { actions: ['no-op'], before: {}, after: {} },
        },
        { address: `module.outer["x"].module.site["team-${CANARY}x"].aws_iam_user.u` },
      ]),
    );
    const [a, b] = r.summary.resources ?? [];
    expect(a?.address).toMatch(
      /^module\.site\["a-\u27E8db_password:[0-9a-f]{6}\u27E9"\]\.module\.inner\["k"\]\.aws_iam_user\.u\["b"\]$/,
    );
    expect(a?.module).toMatch(TAG);
    expect(a?.previousAddress).toMatch(/^aws_iam_user\.old\["\u27E8db_password:[0-9a-f]{6}\u27E9"\]$/);
    // A map key of a variable's value is a value too; the longer value wins over the one inside it.
    expect(b?.address).toMatch(
      /^module\.outer\["x"\]\.module\.site\["\u27E8team:[0-9a-f]{6}\u27E9"\]\.aws_iam_user\.u$/,
    );
    expect(leaks(r, CANARY)).toBe(false);
  });

  it('gives the same plan the same masked addresses and hash twice, and two values two tags', () => {
    const p = plan({ db_password: CANARY, other: 'Other-Secret-55' }, [
      { address: `aws_iam_user.u["${CANARY}"]` },
      { address: 'aws_iam_user.u["Other-Secret-55"]' },
    ]);
    const a = summarisePlan(p, ctx);
    const b = summarisePlan(structuredClone(p), ctx);
    if (!a.ok || !b.ok) throw new Error('not summarised');
    expect(b.summary.resources).toEqual(a.summary.resources);
    expect(b.summary.planHash).toBe(a.summary.planHash);
    const [x, y] = a.summary.resources ?? [];
    const tag = (s: string | undefined) => /:([0-9a-f]{6})\u27E9/.exec(s ?? '')?.[1];
    expect(tag(x?.address)).toBeDefined();
    expect(tag(x?.address)).not.toBe(tag(y?.address));
    // Another site's key gives other tags for the same value.
    const c = summarisePlan(p, { ...ctx, fingerprint: hmacFingerprint(new Uint8Array(32).fill(8)) });
    expect(c.ok && tag(c.summary.resources?.[0]?.address)).not.toBe(tag(x?.address));
  });

  it('shows the value of a variable named in publicVariables', () => {
    const p = plan({ region: 'eu-west-1', db_password: CANARY }, [
      { address: 'aws_iam_user.u["eu-west-1"]' },
      { address: `aws_iam_user.u["eu-west-1-${CANARY}"]` },
    ]);
    const r = summarise(p, { publicVariables: ['region'] });
    expect(r.summary.resources?.[0]?.address).toBe('aws_iam_user.u["eu-west-1"]');
    expect(r.summary.resources?.[1]?.address).toMatch(
      /^aws_iam_user\.u\["eu-west-1-\u27E8db_password:[0-9a-f]{6}\u27E9"\]$/,
    );
    expect(summarise(p).summary.resources?.[0]?.address).toMatch(/\u27E8region:[0-9a-f]{6}\u27E9/);
  });

  it('masks short values only as whole words, and never values under four characters or common words', () => {
    const r = summarise(
      plan({ env: 'dev', flag: 'true', n: 1, colour: 'blue' }, [
        { address: 'aws_iam_user.u["dev-1"]' },
        { address: 'aws_iam_user.u["true"]' },
        { address: 'aws_iam_user.u[1]' },
        { address: 'aws_iam_user.u["bluebird"]' },
        { address: 'aws_iam_user.u["blue"]' },
      ]),
    );
    expect(r.summary.resources?.map((x) => x.address)).toEqual([
      'aws_iam_user.u["dev-1"]',
      'aws_iam_user.u["true"]',
      'aws_iam_user.u[1]',
      'aws_iam_user.u["bluebird"]',
      expect.stringMatching(/^aws_iam_user\.u\["\u27E8colour:[0-9a-f]{6}\u27E9"\]$/),
    ]);
  });

  it('masks nothing in, and withholds none of, the repository plan fixtures whose keys no variable made', () => {
    const masked: string[] = [];
    for (const f of fixturePlanFiles()) {
      const r = summarisePlan(fixtureJson(f), ctx);
      if (!r.ok) continue;
      expect(r.summary.status, f).not.toBe('redaction-failed');
      for (const x of r.summary.resources ?? [])
        if (x.address.includes('\u27E8')) masked.push(`${f}: ${x.address}`);
    }
    // Only the two fixtures whose for_each keys are variable values (web_colours, zones).
    expect(masked.map((m) => m.replace(/:[0-9a-f]{6}/, ''))).toEqual([
      'plans/v1.1-tf1.3-replace-moved.json: aws_subnet.az["⟨zones⟩"]',
      'plans/v1.2-kitchen-sink.json: aws_instance.web["⟨web_colours⟩"]',
    ]);
  });
});
