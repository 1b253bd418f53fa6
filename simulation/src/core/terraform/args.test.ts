import { describe, expect, it } from 'vitest';
import { parseArgs } from './args.js';

describe('terraform arguments', () => {
  it('reads the plan flags the agent passes', () => {
    expect(
      parseArgs([
        'plan',
        '-input=false',
        '-json',
        '-out=tf.plan',
        '-detailed-exitcode',
        '-lock-timeout=30s',
        '-var-file=staging.tfvars',
        '-var-file=secrets.tfvars',
      ]),
    ).toEqual({
      verb: 'plan',
      out: 'tf.plan',
      detailedExitcode: true,
      lockTimeout: '30s',
      json: true,
      varFiles: ['staging.tfvars', 'secrets.tfvars'],
      chdir: null,
    });
  });

  it('takes -chdir before the verb and -out with a space', () => {
    expect(parseArgs(['-chdir=infra/net', 'plan', '-out', 'x.plan'])).toMatchObject({
      verb: 'plan',
      out: 'x.plan',
      detailedExitcode: false,
      json: false,
      varFiles: [],
      chdir: 'infra/net',
    });
  });

  it('reads show -json <file> and version -json', () => {
    expect(parseArgs(['show', '-json', 'tf.plan'])).toEqual({
      verb: 'show',
      json: true,
      file: 'tf.plan',
      chdir: null,
    });
    expect(parseArgs(['version', '-json'])).toEqual({ verb: 'version', json: true, chdir: null });
    expect(parseArgs(['destroy'])).toEqual({ verb: 'unknown', name: 'destroy', chdir: null });
  });
});
