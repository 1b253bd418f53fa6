import { describe, expect, it } from 'vitest';
import { BUILTIN_RULES, RULE_WINDOW, type SecretRule } from './rules.js';
import { planIdentifiers, type SecretValue, scanForSecrets } from './scan.js';

const SECRET = 'Vault-Pa55word/q7Zr+x';
const secrets: SecretValue[] = [{ value: SECRET, source: 'variable' }];
const hit = (text: string, values: readonly SecretValue[] = secrets) => {
  const r = scanForSecrets(text, values, []);
  return r.ok ? null : r.hit;
};
const b64 = (s: string) => Buffer.from(s).toString('base64');

describe('scanForSecrets: a known value in any common encoding is the value', () => {
  it.each([
    ['as is', `aws_x.y["${SECRET}"]`],
    ['JSON-escaped slash and quote', `aws_x.y["${SECRET.replace('/', '\\/')}"]`],
    [
      'as \\u escapes',
      `k["${[...SECRET].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('')}"]`,
    ],
    ['double-escaped', `k["${JSON.stringify(JSON.stringify(SECRET)).slice(1, -1)}"]`],
    ['lower-cased', `k["${SECRET.toLowerCase()}"]`],
    ['upper-cased', `k["${SECRET.toUpperCase()}"]`],
    ['URL-encoded', `k["${encodeURIComponent(SECRET)}"]`],
    ['hex', `k["${Buffer.from(SECRET).toString('hex')}"]`],
    ['upper-case hex', `k["${Buffer.from(SECRET).toString('hex').toUpperCase()}"]`],
    ['base64', `k["${b64(SECRET)}"]`],
    ['base64url', `k["${Buffer.from(SECRET).toString('base64url')}"]`],
    ['base64 inside a longer base64 string (offset 1)', `k["${b64(`x${SECRET}yz`)}"]`],
    ['base64 inside a longer base64 string (offset 2)', `k["${b64(`xy${SECRET}z`)}"]`],
  ])('finds it %s', (_, text) => {
    expect(hit(text)).toBe('known-value-variable');
  });

  it('finds an HCL-escaped template value', () => {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: HCL template text, not a JavaScript template
    expect(hit('k["$${secret-tpl}"]', [{ value: '${secret-tpl}', source: 'configuration' }])).toBe(
      'known-value-configuration',
    );
    expect(hit('k["%%{if x}"]', [{ value: '%{if x}', source: 'configuration' }])).toBe(
      'known-value-configuration',
    );
  });

  it('counts a numeric value written as a number', () => {
    expect(hit('aws_x.y[48213907]', [{ value: '48213907', source: 'sensitive-variable' }])).toBe(
      'known-value-sensitive-variable',
    );
  });

  it('lets a value through when it only appears inside the plan identifiers', () => {
    const ids = planIdentifiers(['aws_instance', 'test_primary'], []);
    const values = [{ value: 'primary', source: 'variable' }];
    expect(scanForSecrets('aws_instance.test_primary', values, [], ids)).toEqual({ ok: true });
    expect(
      scanForSecrets('aws_instance.test_primary', [{ value: 'Primary', source: 'variable' }], [], ids),
    ).toEqual({ ok: true });
  });

  it('lets a public or configured value equal to an instance key through, but never a masked or sensitive one', () => {
    const ids = planIdentifiers(['aws_subnet', 'az'], ['eu-west-1a', 'blue']);
    const text = 'aws_subnet.az["eu-west-1a"] aws_x.y["blue"]';
    for (const source of ['public-variable', 'configuration'])
      expect(scanForSecrets(text, [{ value: 'eu-west-1a', source }], [], ids)).toEqual({ ok: true });
    // A variable's value is masked in keys (decision 210); one still there is a hit, unless it is
    // short enough to be masked as a whole word only.
    expect(scanForSecrets(text, [{ value: 'eu-west-1a', source: 'variable' }], [], ids)).toEqual({
      ok: false,
      hit: 'known-value-variable',
    });
    expect(scanForSecrets(text, [{ value: 'blue', source: 'variable' }], [], ids)).toEqual({ ok: true });
    expect(scanForSecrets(text, [{ value: 'eu-west-1a', source: 'sensitive-attribute' }], [], ids)).toEqual({
      ok: false,
      hit: 'known-value-sensitive-attribute',
    });
  });

  it('leaves text without the value alone, even with short and encoded look-alikes', () => {
    expect(hit('aws_x.y["Vault-Pa55"] tags.env data.aws_ami.ubuntu')).toBeNull();
    expect(hit('abc', [{ value: 'abc', source: 'env' }])).toBeNull();
  });
});

describe('shape rules', () => {
  const counting = (seen: number[]): SecretRule[] =>
    BUILTIN_RULES.map((r) => ({
      name: r.name,
      test: (t: string) => {
        seen.push(t.length);
        return r.test(t);
      },
    }));

  it(`gives a rule at most ${RULE_WINDOW} characters at a time, and still finds a shape at a window edge`, () => {
    const seen: number[] = [];
    const filler = 'a'.repeat(RULE_WINDOW - 10);
    const r = scanForSecrets(`${filler} AKIAIOSFODNN7EXAMPLE ${'b'.repeat(50_000)}`, [], counting(seen));
    expect(r).toEqual({ ok: false, hit: 'aws-access-key-id' });
    expect(Math.max(...seen)).toBeLessThanOrEqual(RULE_WINDOW);
  });

  it.each([
    ['a run of letters', 'a'.repeat(100_000)],
    ['repeated JWT starts', '-eyJ'.repeat(25_000)],
    ['repeated keywords with colons', 'token:'.repeat(17_000)],
    ['repeated schemes', 'ab://'.repeat(20_000)],
    ['a 100k-character key in a path', `tags.${'k'.repeat(100_000)}`],
  ])('scans 100k characters of %s without quadratic backtracking', (_, text) => {
    const seen: number[] = [];
    expect(scanForSecrets(text, secrets, counting(seen)).ok).toBe(true);
    expect(Math.max(...seen)).toBeLessThanOrEqual(RULE_WINDOW);
  });
});
