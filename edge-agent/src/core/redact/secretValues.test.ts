import { describe, expect, it } from 'vitest';
import type { PlanJson } from '../plan/planJson.js';
import { collectSecretValues } from './secretValues.js';
import { envVarValues, varFileValues } from './varFileValues.js';

const plan = (over: Partial<PlanJson>): PlanJson => ({ format_version: '1.2', planned_values: {}, ...over });
const values = (p: PlanJson) => new Map(collectSecretValues(p, new Set()).map((s) => [s.value, s.source]));

function nest(depth: number, leaf: unknown): unknown {
  let v = leaf;
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
}

describe('collectSecretValues', () => {
  it('collects the keys of a map variable, of configuration literals and of tags as values', () => {
    const v = values(
      plan({
        variables: { owners: { value: { 'Team Hunter2 Ops': 'yes' } } },
        configuration: {
          root_module: { resources: [{ expressions: { tags: { constant_value: { 'cfg-key-9': 'v' } } } }] },
        },
        resource_changes: [
          {
            address: 'a.b',
            change: { actions: ['update'], before: { tags: { 'drift-key-7': 'x' } }, after: { tags: {} } },
          },
        ],
      }),
    );
    expect(v.get('Team Hunter2 Ops')).toBe('variable-key');
    expect(v.get('cfg-key-9')).toBe('configuration-key');
    expect(v.get('drift-key-7')).toBe('attribute-key');
    expect(v.has('tags')).toBe(false);
  });

  it('collects numbers, sensitive variables and each line of a multi-line value', () => {
    const v = values(
      plan({
        variables: {
          pin: { value: 48213907 },
          key: { value: '-----BEGIN X-----\nMC4CAQAwBQYDK2Vw\n-----END X-----' },
        },
        configuration: { root_module: { variables: { pin: { sensitive: true } } } },
      }),
    );
    expect(v.get('48213907')).toBe('sensitive-variable');
    expect(v.get('MC4CAQAwBQYDK2Vw')).toBe('variable');
  });

  it('walks values nested 5,000 deep without overflowing the stack', () => {
    const deep = nest(5000, 'deep-secret-value');
    const v = values(
      plan({
        variables: { x: { value: deep as never } },
        resource_changes: [
          {
            address: 'a.b',
            change: {
              actions: ['update'],
              before: deep as never,
              after_sensitive: true,
              after: deep as never,
            },
          },
        ],
        configuration: { root_module: { x: { constant_value: deep as never } } } as never,
      }),
    );
    expect(v.get('deep-secret-value')).toBe('sensitive-attribute');
  });
});

describe('values in variable definitions', () => {
  it('reads strings, numbers, heredocs and map keys of a .tfvars file, but not the variable names', () => {
    const got = varFileValues(
      'staging.tfvars',
      `# comment "not-a-value"
db_password = "hunter2-\\"quoted\\""
pin         = 48213907
tags = {
  "Cost Center" = "cc-42"
  owner_team    = "ops"
}
cert = <<-EOT
  -----BEGIN CERTIFICATE-----
  MIIB
  EOT
`,
    );
    expect(got).toEqual(
      expect.arrayContaining(['hunter2-"quoted"', '48213907', 'Cost Center', 'cc-42', 'owner_team', 'ops']),
    );
    expect(got.some((v) => v.includes('MIIB'))).toBe(true);
    expect(got).not.toContain('db_password');
    expect(got).not.toContain('not-a-value');
  });

  it('reads .tfvars.json and TF_VAR_ literals', () => {
    expect(varFileValues('x.tfvars.json', '{"m": {"k-one": "v-one"}, "n": 12345}')).toEqual(
      expect.arrayContaining(['k-one', 'v-one', '12345']),
    );
    expect(envVarValues('{ region = "eu-x-9", ids = [1234] }')).toEqual(
      expect.arrayContaining(['{ region = "eu-x-9", ids = [1234] }', 'region', 'eu-x-9', '1234']),
    );
  });
});
