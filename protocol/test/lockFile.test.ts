import { describe, expect, it } from 'vitest';
import {
  LOCK_FILE_MAX_HASHES,
  LOCK_FILE_MAX_PROVIDERS,
  ProviderBuildSchema,
  packedZipPath,
  parseLockFile,
  parsePackedZipPath,
  providerBuild,
  terraformPlatform,
  unpackedDirPath,
  zipHashes,
} from '../src/index.js';

const ZH = (c: string) => `zh:${c.repeat(64)}`;
const H1 = 'h1:/ZY1j8YgB5GeqPnjT8avyRFjUcGH3rCk1xGLKcUCtWc=';

/** A lock file as `terraform init` writes it. */
const WRITTEN = `# This file is maintained automatically by "terraform init".
# Manual edits may be lost in future updates.

provider "registry.terraform.io/hashicorp/aws" {
  version     = "5.31.0"
  constraints = "~> 5.0"
  hashes = [
    "${H1}",
    "${ZH('a')}",
    "${ZH('b')}",
  ]
}

provider "registry.terraform.io/hashicorp/random" {
  version = "3.6.2"
  hashes = [
    "${ZH('c')}",
  ]
}
`;

const problem = (text: string) => {
  const r = parseLockFile(text);
  if (r.ok) throw new Error('expected a problem');
  return r.problem;
};

describe('parseLockFile', () => {
  it('reads every provider block terraform init writes, hashes in order', () => {
    const r = parseLockFile(WRITTEN);
    expect(r).toEqual({
      ok: true,
      providers: [
        {
          address: 'registry.terraform.io/hashicorp/aws',
          version: '5.31.0',
          constraints: '~> 5.0',
          hashes: [H1, ZH('a'), ZH('b')],
        },
        { address: 'registry.terraform.io/hashicorp/random', version: '3.6.2', hashes: [ZH('c')] },
      ],
    });
    if (r.ok) expect(zipHashes(r.providers[0]!)).toEqual(['a'.repeat(64), 'b'.repeat(64)]);
  });

  it('takes one-line lists, // and trailing comments, CRLF line ends and an empty file', () => {
    const text = `// hand-written\r\nprovider "example.com/acme/thing" { # inline\r\n  version = "1.0.0-beta1"\r\n  hashes = ["${H1}", "${ZH('d')}"] // two\r\n}\r\n`;
    const r = parseLockFile(text);
    expect(r.ok && r.providers[0]).toEqual({
      address: 'example.com/acme/thing',
      version: '1.0.0-beta1',
      hashes: [H1, ZH('d')],
    });
    expect(parseLockFile('')).toEqual({ ok: true, providers: [] });
    expect(parseLockFile('# only a comment')).toEqual({ ok: true, providers: [] });
  });

  it('keeps a // inside a hash string: it is data, not a comment', () => {
    const h = 'h1:ab//cdefghijklmnopqrstuvwxyz0123456789ABCDE=';
    const r = parseLockFile(
      `provider "registry.terraform.io/a/b" {\n  version = "1.0.0"\n  hashes = ["${h}"]\n}\n`,
    );
    expect(r.ok && r.providers[0]!.hashes).toEqual([h]);
  });

  it('names the line and what it expected when a block is not closed', () => {
    expect(problem('provider "registry.terraform.io/a/b" {\n  version = "1.0.0"\n')).toBe(
      'line 2: the provider block opened on line 1 is not closed (expected })',
    );
    expect(
      problem(`provider "registry.terraform.io/a/b" {\n  version = "1.0.0"\n  hashes = [\n    "${H1}",`),
    ).toMatch(/^line 4: .*not closed \(expected \] and \}\)$/);
  });

  it('refuses weird quotes, escapes, block comments and stray characters with the line', () => {
    expect(problem('provider "registry.terraform.io/a/b {\n')).toBe(
      'line 1: a string is not closed on its line (expected ")',
    );
    expect(problem("provider 'registry.terraform.io/a/b' {\n")).toMatch(/^line 1: unexpected character "'"/);
    expect(problem('\n\nprovider "registry.terraform.io/a/\\u0062" {')).toMatch(/^line 3: escapes/);
    expect(problem('/* note */\n')).toMatch(/^line 1: block comments/);
    expect(problem('provider “registry.terraform.io/a/b” {')).toMatch(/^line 1: unexpected character/);
  });

  it('refuses unknown blocks and attributes, a missing version, duplicates and bad values', () => {
    expect(problem('module "x" {\n}\n')).toBe(
      'line 1: unexpected module (expected provider "<host>/<namespace>/<type>" {)',
    );
    expect(problem('provider "registry.terraform.io/a/b" {\n  checksum = "x"\n}')).toBe(
      'line 2: unexpected checksum (expected version, constraints, hashes or })',
    );
    expect(problem('provider "registry.terraform.io/a/b" {\n}\n')).toMatch(/^line 2: .*has no version/);
    expect(problem('provider "../etc/passwd" {\n')).toMatch(/is not a provider address/);
    expect(problem('provider "Registry.Terraform.io/a/b" {\n')).toMatch(/is not a provider address/);
    expect(
      problem('provider "registry.terraform.io/a/b" {\n version = "1.0.0"\n version = "1.0.1"\n}'),
    ).toMatch(/^line 3: version is set twice/);
    expect(problem('provider "registry.terraform.io/a/b" {\n version = "../1"\n}')).toMatch(
      /is not a provider version/,
    );
    expect(
      problem('provider "registry.terraform.io/a/b" {\n version = "1"\n hashes = ["zh:xyz"]\n}'),
    ).toMatch(/^line 3: "zh:xyz" is not a provider hash/);
    const twice = 'provider "registry.terraform.io/a/b" {\n version = "1"\n}\n';
    expect(problem(twice + twice)).toMatch(/^line 4: provider "registry.terraform.io\/a\/b" is locked twice/);
    expect(
      problem(`provider "registry.terraform.io/a/b" {\n version = "1" hashes = ["${H1}"] oops\n}`),
    ).toMatch(/^line 2: unexpected oops/);
  });

  it('caps the file, the providers and the hashes', () => {
    expect(problem('#'.repeat(1024 * 1024 + 1))).toMatch(/over 1048576 characters/);
    const many = Array.from(
      { length: LOCK_FILE_MAX_PROVIDERS + 1 },
      (_, i) => `provider "registry.terraform.io/a/p${i}" {\n version = "1.0.0"\n}\n`,
    ).join('');
    expect(problem(many)).toMatch(/over 500 providers/);
    const hashes = Array.from({ length: LOCK_FILE_MAX_HASHES + 1 }, () => `"${ZH('e')}",`).join('\n');
    expect(
      problem(`provider "registry.terraform.io/a/b" {\n version = "1"\n hashes = [\n${hashes}\n]\n}`),
    ).toMatch(/has over 200 hashes/);
  });

  it('reads a hostile megabyte in linear time: one long line of quotes, one of commas', () => {
    // No wall-clock limit: the point is that these finish at all (a backtracking regex would not).
    const quotes = `provider "registry.terraform.io/a/b" {\n version = "1"\n hashes = [${'"h1:x",'.repeat(140_000)}`;
    expect(problem(quotes.slice(0, 1024 * 1024))).toMatch(/^line 3: /);
    expect(problem(`provider "registry.terraform.io/a/b" {\n hashes = [${','.repeat(1_000_000)}`)).toMatch(
      /^line 2: unexpected ,/,
    );
  });
});

describe('provider package names', () => {
  const aws = 'registry.terraform.io/hashicorp/aws';

  it('names a build the way ProviderBuildSchema accepts it', () => {
    const b = providerBuild(aws, '5.31.0', 'linux_amd64');
    expect(b).toBe('registry.terraform.io/hashicorp/aws 5.31.0 linux_amd64');
    expect(ProviderBuildSchema.safeParse(b).success).toBe(true);
  });

  it("builds and parses Terraform's packed filesystem-mirror path", () => {
    const p = packedZipPath(aws, '5.31.0', 'linux_amd64');
    expect(p).toBe('registry.terraform.io/hashicorp/aws/terraform-provider-aws_5.31.0_linux_amd64.zip');
    expect(parsePackedZipPath(p)).toEqual({ address: aws, version: '5.31.0', platform: 'linux_amd64' });
    expect(unpackedDirPath(aws, '5.31.0', 'darwin_arm64')).toBe(`${aws}/5.31.0/darwin_arm64`);
  });

  it('refuses any other shape: absolute, .., another type, extra parts, odd platform', () => {
    for (const bad of [
      `/${aws}/terraform-provider-aws_5.31.0_linux_amd64.zip`,
      '../hashicorp/aws/terraform-provider-aws_5.31.0_linux_amd64.zip',
      'registry.terraform.io/../aws/terraform-provider-aws_5.31.0_linux_amd64.zip',
      'registry.terraform.io/hashicorp/aws/terraform-provider-tls_5.31.0_linux_amd64.zip',
      'registry.terraform.io/hashicorp/aws/terraform-provider-aws_5.31.0_linux.zip',
      'registry.terraform.io/hashicorp/aws/terraform-provider-aws_5.31.0_linux_amd64_x.zip',
      'registry.terraform.io/hashicorp/aws/terraform-provider-aws_.._linux_amd64.zip',
      'registry.terraform.io/hashicorp/aws/x/terraform-provider-aws_5.31.0_linux_amd64.zip',
      'registry.terraform.io\\hashicorp\\aws\\terraform-provider-aws_5.31.0_linux_amd64.zip',
      'registry.terraform.io/hashicorp/aws/terraform-provider-aws_5.31.0_linux_amd64.tar.gz',
    ])
      expect(parsePackedZipPath(bad), bad).toBeNull();
  });

  it("maps Node's platform and arch to Terraform's", () => {
    expect(terraformPlatform('linux', 'x64')).toBe('linux_amd64');
    expect(terraformPlatform('darwin', 'arm64')).toBe('darwin_arm64');
    expect(terraformPlatform('win32', 'ia32')).toBe('windows_386');
    expect(terraformPlatform('freebsd', 'arm')).toBe('freebsd_arm');
  });
});
