import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type LockedProvider, packedZipPath, unpackedDirPath } from '@driftline/protocol';
import { afterAll, describe, expect, it } from 'vitest';
import { missingProviders, scanMirror } from './mirror.js';
import { writeZip } from './testZip.js';

const root = mkdtempSync(join(tmpdir(), 'provider-mirror-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const AWS = 'registry.terraform.io/hashicorp/aws';
const RANDOM = 'registry.terraform.io/hashicorp/random';
const TLS = 'registry.terraform.io/hashicorp/tls';
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** Puts a packed zip in `mirror` and returns its bytes. */
function packed(mirror: string, address: string, version: string, platform: string, body = address): Buffer {
  const zip = writeZip([{ name: `terraform-provider-${address.split('/')[2]}_v${version}_x5`, data: body }]);
  const p = join(mirror, packedZipPath(address, version, platform));
  mkdirSync(join(p, '..'), { recursive: true });
  writeFileSync(p, zip);
  return zip;
}

function unpacked(mirror: string, address: string, version: string, platform: string) {
  const d = join(mirror, unpackedDirPath(address, version, platform));
  mkdirSync(d, { recursive: true });
  writeFileSync(join(d, `terraform-provider-${address.split('/')[2]}`), 'ELF');
}

describe('scanMirror', () => {
  it('finds packed zips and unpacked directories in every mirror, and ignores what is not a build', async () => {
    const a = join(root, 'scan-a');
    const b = join(root, 'scan-b');
    packed(a, AWS, '5.31.0', 'linux_amd64');
    unpacked(b, RANDOM, '3.6.2', 'darwin_arm64');
    writeFileSync(join(a, 'registry.terraform.io/hashicorp/aws/index.json'), '{}'); // providers mirror's index
    writeFileSync(join(a, 'registry.terraform.io/hashicorp/aws/5.31.0.json'), '{}');
    writeFileSync(
      join(a, 'registry.terraform.io/hashicorp/aws/terraform-provider-tls_1.0.0_linux_amd64.zip'),
      '',
    );
    mkdirSync(join(b, 'registry.terraform.io/hashicorp/random/3.6.2/not-a-platform'), { recursive: true });
    mkdirSync(join(b, 'registry.terraform.io/Bad/x/1.0.0/linux_amd64'), { recursive: true });
    // A link below the root is not followed (Terraform follows only the root itself).
    mkdirSync(join(root, 'elsewhere/registry.terraform.io/hashicorp/tls/4.0.5/linux_amd64'), {
      recursive: true,
    });
    symlinkSync(
      join(root, 'elsewhere/registry.terraform.io/hashicorp'),
      join(b, 'registry.terraform.io/linked'),
    );
    const { builds, truncated } = await scanMirror([a, b, join(root, 'no-such-mirror')]);
    expect(truncated).toBe(false);
    expect(builds.map((x) => [x.build, x.layout])).toEqual([
      ['registry.terraform.io/hashicorp/aws 5.31.0 linux_amd64', 'packed'],
      ['registry.terraform.io/hashicorp/random 3.6.2 darwin_arm64', 'unpacked'],
    ]);
    expect(builds[0]!.path).toBe(join(a, packedZipPath(AWS, '5.31.0', 'linux_amd64')));
  });

  it('stops after maxEntries directory entries and says so', async () => {
    const m = join(root, 'scan-big');
    for (let i = 0; i < 20; i++) packed(m, AWS, `1.0.${i}`, 'linux_amd64');
    const all = await scanMirror([m]);
    expect(all.builds).toHaveLength(20);
    const some = await scanMirror([m], { maxEntries: 10 });
    expect(some.truncated).toBe(true);
    expect(some.builds.length).toBeLessThan(10);
  });
});

describe('missingProviders', () => {
  const lock = (address: string, version: string, hashes: string[] = []): LockedProvider => ({
    address,
    version,
    hashes,
  });

  it('needs what no mirror holds for the platform, and nothing that one does', async () => {
    const m = join(root, 'need');
    const aws = packed(m, AWS, '5.31.0', 'linux_amd64');
    unpacked(m, RANDOM, '3.6.2', 'linux_amd64');
    packed(m, TLS, '4.0.5', 'darwin_arm64');
    const r = await missingProviders(
      [
        lock(AWS, '5.31.0', [`zh:${sha(aws)}`, `zh:${'0'.repeat(64)}`]),
        lock(RANDOM, '3.6.2'),
        lock(TLS, '4.0.5'),
      ],
      [join(root, 'empty-mirror'), m],
      'linux_amd64',
    );
    expect(r).toEqual({ needs: ['registry.terraform.io/hashicorp/tls 4.0.5 linux_amd64'], problems: [] });
    const mac = await missingProviders([lock(TLS, '4.0.5')], [m], 'darwin_arm64');
    expect(mac.needs).toEqual([]);
    expect((await missingProviders([lock(AWS, '5.32.0')], [m], 'linux_amd64')).needs).toEqual([
      'registry.terraform.io/hashicorp/aws 5.32.0 linux_amd64',
    ]);
  });

  it("needs a packed zip whose sha256 is not among the lock's zh: hashes, and says why", async () => {
    const m = join(root, 'mismatch');
    const zip = packed(m, AWS, '5.31.0', 'linux_amd64', 'tampered');
    const r = await missingProviders([lock(AWS, '5.31.0', [`zh:${'a'.repeat(64)}`])], [m], 'linux_amd64');
    expect(r.needs).toEqual(['registry.terraform.io/hashicorp/aws 5.31.0 linux_amd64']);
    expect(r.problems).toHaveLength(1);
    expect(r.problems[0]).toContain(`has sha256 ${sha(zip)}, which is not among the lock file's zh: hashes`);
    // Without zh: hashes (only h1:, of the unpacked contents) there is nothing to compare the zip with.
    const h1 = await missingProviders([lock(AWS, '5.31.0', [`h1:${'A'.repeat(43)}=`])], [m], 'linux_amd64');
    expect(h1).toEqual({ needs: [], problems: [] });
  });

  it('checks the copy Terraform would take: the first mirror holding the build', async () => {
    const first = join(root, 'first');
    const second = join(root, 'second');
    const good = packed(second, AWS, '5.31.0', 'linux_amd64', 'good');
    packed(first, AWS, '5.31.0', 'linux_amd64', 'bad');
    const l = [lock(AWS, '5.31.0', [`zh:${sha(good)}`])];
    expect((await missingProviders(l, [second, first], 'linux_amd64')).needs).toEqual([]);
    expect((await missingProviders(l, [first, second], 'linux_amd64')).problems).toHaveLength(1);
  });
});
