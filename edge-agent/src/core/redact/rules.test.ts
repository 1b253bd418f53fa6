import { describe, expect, it } from 'vitest';
import { BUILTIN_PATTERNS, BUILTIN_RULES, nestedQuantifier } from './rules.js';
import { scanForSecrets } from './scan.js';

const hit = (text: string) => {
  const r = scanForSecrets(text, [], BUILTIN_RULES);
  return r.ok ? null : r.hit;
};

describe('secret shape rules', () => {
  it.each([
    ['AKIAIOSFODNN7EXAMPLE', 'aws-access-key-id'],
    ['-----BEGIN RSA PRIVATE KEY-----', 'private-key-block'],
    ['eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U', 'jwt'],
    [`ghp_${'a1B2'.repeat(9)}`, 'github-token'],
    ['glpat-abcdefghij0123456789', 'gitlab-token'],
    ['xoxb-1234567890-abcdef', 'slack-token'],
    ['postgres://admin:hunter2@db.internal/app', 'url-credentials'],
    ['password=correcthorse', 'secret-assignment'],
    ['api_key: 9f8e7d6c5b', 'secret-assignment'],
    ['wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', 'high-entropy-string'],
  ])('finds %s as %s', (text, rule) => {
    expect(hit(`some context ${text} more`)).toBe(rule);
  });

  it.each([
    'module.network.aws_vpc.this[0]',
    'a3f9c2e1b4d5a6f7e8d9c0b1a2f3e4d5c6b7a8f9e0d1c2b3a4f5e6d7c8b9a0f1', // a sha256 / commit id
    '123e4567-e89b-12d3-a456-426614174000',
    'Error: token: must be set before planning',
    'password = (sensitive value)',
    'ingress[0].cidr_blocks[0], root_block_device[0].volume_size',
    'registry.terraform.io/hashicorp/aws',
  ])('leaves ordinary plan text alone: %s', (text) => {
    expect(hit(text)).toBeNull();
  });
});

describe('nestedQuantifier', () => {
  it.each(['(a+)+', '(?:x*y)*', '(a|b+){2,}', '((ab)+c)*', '(\\d+)*$', '(a|aa)+b', '(?:x|xy)*z'])(
    'refuses %s',
    (src) => {
      expect(nestedQuantifier(src)).toBe(true);
    },
  );

  it.each(['CORP-[0-9]{8}', '(?:ab)+', '(a+)?', '[(+)]+', '\\(a+\\)+', 'x{2}(?:y|z)'])(
    'accepts %s',
    (src) => {
      expect(nestedQuantifier(src)).toBe(false);
    },
  );

  it.each(BUILTIN_PATTERNS.map(([name, p]) => [name, p.source]))(
    'finds none in built-in rule %s',
    (_, src) => {
      expect(nestedQuantifier(src)).toBe(false);
    },
  );
});
