import { refMatches, refNameProblem } from '@driftline/protocol';
import { describe, expect, it } from 'vitest';
import { initNeeds, inside, offlineCliConfig } from './prepareSource.js';

const result = (stderr: string) => ({ stdout: '', stderr, exitCode: 1, signal: null, timedOut: false });

describe('offline init', () => {
  it('writes a CLI configuration with only filesystem mirrors, escaping HCL templates', () => {
    const c = offlineCliConfig(['/srv/mirror', `/odd/${'$'}{path}"x`]);
    expect(c).toContain('filesystem_mirror {\n    path = "/srv/mirror"\n  }');
    expect(c).toContain('path = "/odd/$${path}\\"x"');
    expect(c).toContain('direct {\n    exclude = ["*/*/*"]\n  }');
  });

  it('reads the providers Terraform could not install, also from wrapped error boxes', () => {
    const wrapped = `╷
│ Error: Failed to query available provider packages
│
│ Could not retrieve the list of available versions for provider
│ hashicorp/aws: provider registry.terraform.io/hashicorp/aws was not found
│ in any of the search locations
│
│   - /srv/mirror
╵
`;
    expect(initNeeds(result(wrapped) as never)).toEqual(['registry.terraform.io/hashicorp/aws']);
    const platform =
      'Error: Incompatible provider version\n\nProvider registry.terraform.io/hashicorp/null v3.2.2 does not have a package available for your current platform, linux_arm64.';
    expect(initNeeds(result(platform) as never)).toEqual(['registry.terraform.io/hashicorp/null']);
    expect(initNeeds(result('Error: Unsupported argument') as never)).toEqual([]);
  });

  it('keeps paths inside the checkout', () => {
    expect(inside('/s/src', 'stacks/net', '.')).toBe('/s/src/stacks/net');
    expect(inside('/s/src', '../etc')).toBeNull();
    expect(inside('/s/src', 'a', '../../b')).toBeNull();
    expect(inside('/s/src', '.')).toBe('/s/src');
  });
});

describe('ref names and patterns', () => {
  it('refuses traversal, shell metacharacters and git-invalid names', () => {
    for (const bad of [
      'a..b',
      '$(id)',
      'pr/1;rm',
      'x y',
      '/main',
      'main/',
      '.hidden',
      'x.lock',
      '-rf',
      'a//b',
      '',
    ])
      expect(refNameProblem(bad), bad).not.toBeNull();
    for (const good of ['main', 'pr/42', 'release/2.1', 'feature_x-1'])
      expect(refNameProblem(good), good).toBeNull();
  });

  it('matches * across slashes, in linear-ish time on hostile input', () => {
    expect(refMatches('pr/*', 'pr/42')).toBe(true);
    expect(refMatches('pr/*', 'main')).toBe(false);
    expect(refMatches('*', 'release/2.1')).toBe(true);
    expect(refMatches('rel*/*x', 'release/2.1x')).toBe(true);
    expect(refMatches(`${'*a'.repeat(20)}b`, 'a'.repeat(200))).toBe(false);
  });
});
