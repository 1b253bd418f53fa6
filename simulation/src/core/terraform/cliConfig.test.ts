import { describe, expect, it } from 'vitest';
import { canHandle, matchesPattern, parseCliConfig } from './cliConfig.js';
import { parseHcl } from './hcl.js';

describe('CLI configuration', () => {
  it("reads provider_installation's methods in order, with include and exclude", () => {
    const r = parseCliConfig(`# Written by the agent
plugin_cache_dir   = "$HOME/.terraform.d/plugin-cache"
disable_checkpoint = true
credentials "app.terraform.io" {
  token = "xxxxxx.atlasv1.zzzzzzzzzzzzz"
}
provider_installation {
  filesystem_mirror {
    path    = "/var/lib/driftline/providers"
    include = ["registry.terraform.io/hashicorp/*"]
  }
  /* a second mirror */
  filesystem_mirror {
    path = "mirrors/extra"
  }
  direct {
    exclude = ["*/*/*", "example.com/acme/*",]
  }
}
`);
    expect(r).toEqual({
      ok: true,
      methods: [
        {
          kind: 'filesystem_mirror',
          path: '/var/lib/driftline/providers',
          include: ['registry.terraform.io/hashicorp/*'],
          exclude: [],
        },
        { kind: 'filesystem_mirror', path: 'mirrors/extra', include: [], exclude: [] },
        { kind: 'direct', include: [], exclude: ['*/*/*', 'example.com/acme/*'] },
      ],
    });
  });

  it('has no methods when the file has no provider_installation block (direct, as Terraform)', () => {
    expect(parseCliConfig('disable_checkpoint = true\n')).toEqual({ ok: true, methods: null });
    expect(parseCliConfig('')).toEqual({ ok: true, methods: null });
  });

  it('refuses what Terraform refuses, naming the line', () => {
    expect(parseCliConfig('provider_installation {\n  filesystem_mirror {\n  }\n}\n')).toEqual({
      ok: false,
      problem: 'line 2: filesystem_mirror needs path = "<directory>"',
    });
    expect(parseCliConfig('provider_installation {\n  direct { exclude = ["*/aws"] }\n}')).toMatchObject({
      ok: false,
      problem: expect.stringContaining(
        'namespace can be a wildcard only if the provider type is also a wildcard',
      ),
    });
    expect(parseCliConfig('provider_installation {\n  ftp {}\n}')).toMatchObject({
      ok: false,
      problem: expect.stringContaining('unknown installation method "ftp"'),
    });
    expect(parseCliConfig('provider_installation {\n  direct {\n')).toMatchObject({
      ok: false,
      problem: 'line 3: unexpected end of file (expected })',
    });
    expect(parseCliConfig('provider_installation {}\nprovider_installation {}\n')).toMatchObject({
      ok: false,
    });
  });

  it('caps nesting and size, and survives hostile text', () => {
    expect(parseHcl(`a = ${'['.repeat(100)}`)).toMatchObject({
      ok: false,
      problem: expect.stringContaining('nested too deep'),
    });
    expect(parseHcl('x'.repeat(300_000))).toMatchObject({ ok: false });
    expect(parseHcl('a = "unterminated\n')).toMatchObject({
      ok: false,
      problem: 'line 1: a string is not closed on its line',
    });
    expect(parseHcl('/* open')).toMatchObject({ ok: false });
    expect(parseHcl(`a = "${'\\'.repeat(50_000)}"`)).toMatchObject({ ok: true });
  });
});

describe('provider matching patterns', () => {
  it('reads two segments as the default registry and three as naming the host', () => {
    const aws = 'registry.terraform.io/hashicorp/aws';
    expect(matchesPattern('*/*', aws)).toBe(true);
    expect(matchesPattern('*/*', 'example.com/acme/thing')).toBe(false);
    expect(matchesPattern('*/*/*', 'example.com/acme/thing')).toBe(true);
    expect(matchesPattern('hashicorp/aws', aws)).toBe(true);
    expect(matchesPattern('hashicorp/tls', aws)).toBe(false);
    expect(matchesPattern('Registry.Terraform.io/HashiCorp/*', aws)).toBe(true);
  });

  it('lets exclude win over include, and no include mean everything', () => {
    const m = { kind: 'direct' as const, include: ['hashicorp/*'], exclude: ['hashicorp/aws'] };
    expect(canHandle(m, 'registry.terraform.io/hashicorp/aws')).toBe(false);
    expect(canHandle(m, 'registry.terraform.io/hashicorp/tls')).toBe(true);
    expect(canHandle(m, 'registry.terraform.io/acme/tls')).toBe(false);
    expect(canHandle({ kind: 'direct', include: [], exclude: [] }, 'example.com/a/b')).toBe(true);
  });
});
