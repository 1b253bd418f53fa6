import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../config.js';
import { buildErrorExcerpt } from './excerpt.js';
import { findTarget } from './planTarget.js';
import { toolSetup } from './toolSetup.js';

function setup(redaction: string) {
  const r = parseConfig(
    `site: s\nagent: a\ndataDir: /tmp/x\nhubPublicKeyFile: /tmp/x/hub.pub\nupstreams: [{ url: "http://127.0.0.1:1", tokenFile: /tmp/x/t }]\n${redaction}components:\n  - { name: c, workingDir: /tmp/x, environments: [prod] }\n`,
    '/tmp/x',
  );
  if (!r.ok) throw new Error(r.problems.join('\n'));
  const t = findTarget(r.config, 'c', 'prod')!;
  return toolSetup(
    t,
    r.config,
    {
      baseEnv: {},
      moduleVariables: async () => [
        { name: 'admin_name', sensitive: false, defaults: ['DefaultCanary42'] },
        { name: 'region', sensitive: false, defaults: ['eu-north-9'] },
        { name: 'kind', sensitive: false, defaults: ['error', 'name'] },
      ],
    },
    '/tmp/x',
  );
}

describe('toolSetup: declared defaults are known values (decision 210)', () => {
  it('withholds a failed plan excerpt that carries a declared default, but not a public one', async () => {
    const s = await setup('redaction: { publicVariables: [region] }\n');
    expect(s.secrets).toContainEqual({ value: 'DefaultCanary42', source: 'default' });
    expect(s.secrets.map((x) => x.value)).not.toContain('eu-north-9');
    // Short defaults are ordinary words too often: they would withhold ordinary excerpts.
    expect(s.secrets.map((x) => x.value)).not.toContain('error');
    const out = {
      stderr: 'Error: Unsupported argument\nThe name DefaultCanary42 is not valid in eu-north-9.\n',
    };
    expect(buildErrorExcerpt(out, s.secrets, s.rules)).toMatchObject({ withheld: 'known-value-default' });
  });
});
