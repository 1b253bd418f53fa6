import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { packedZipPath } from '@driftline/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHub, type TestHub } from './hubFixture.js';
import { addTestUser } from './users.js';

const bin = fileURLToPath(new URL('../bin/hub.js', import.meta.url));
const AWS = 'registry.terraform.io/hashicorp/aws';
const RANDOM = 'registry.terraform.io/hashicorp/random';
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** Runs the hub CLI as a process without blocking the in-process hub it talks to. */
function hubCli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(process.execPath, [bin, ...args], { encoding: 'utf8', timeout: 60_000 }, (err, stdout, stderr) =>
      done({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

let t: TestHub;
let work: string;
let tokenFile: string;
let remote: string[];
let token: string;
const zips: Record<string, Buffer> = {};

/** A `terraform providers mirror` output directory with the given builds. */
function mirrorDir(name: string, builds: [string, string, string, Buffer][]): string {
  const dir = join(work, name);
  for (const [address, version, platform, bytes] of builds) {
    const p = join(dir, packedZipPath(address, version, platform));
    mkdirSync(join(p, '..'), { recursive: true });
    writeFileSync(p, bytes);
  }
  mkdirSync(dir, { recursive: true });
  return dir;
}

function lockFile(name: string, entries: [string, string, Buffer[]][]): string {
  const path = join(work, name);
  writeFileSync(
    path,
    entries
      .map(
        ([address, version, bins]) =>
          `provider "${address}" {\n  version = "${version}"\n  hashes = [\n${bins.map((b) => `    "zh:${sha(b)}",\n`).join('')}  ]\n}\n`,
      )
      .join('\n'),
  );
  return path;
}

const publicationNames = async () => {
  const r = await fetch(`${t.url}/api/publications`, { headers: { authorization: `Bearer ${token}` } });
  return ((await r.json()) as { publications: { name: string }[] }).publications.map((p) => p.name);
};

beforeAll(async () => {
  t = await startHub();
  work = mkdtempSync(join(tmpdir(), 'mirror-publish-'));
  const ci = await addTestUser(t.hub.store, 'ci', ['publisher']);
  tokenFile = join(work, 'ci.token');
  writeFileSync(tokenFile, `${ci.token}\n`);
  token = ci.token;
  remote = ['--hub', t.url, '--token-file', tokenFile];
  // The site reports its platform and a provider build it already holds.
  const [agent] = await t.hub.store.listAgents();
  await t.hub.store.commit({
    agents: [
      {
        ...agent!,
        platform: 'linux_amd64',
        providers: [`${RANDOM} 3.6.2 linux_amd64`],
        factsReportedAt: t.clock.now(),
      },
    ],
  });
  zips.aws = Buffer.from('PK aws 5.31.0 linux_amd64');
  zips.awsMac = Buffer.from('PK aws 5.31.0 darwin_arm64');
  zips.random = Buffer.from('PK random 3.6.2 linux_amd64');
});
afterAll(async () => {
  await t.close();
  rmSync(work, { recursive: true, force: true });
});

describe('hub mirror publish (a real process against a real hub)', () => {
  it('publishes the builds the site lacks for its platform and skips what it reported', async () => {
    const dir = mirrorDir('mirror', [
      [AWS, '5.31.0', 'linux_amd64', zips.aws!],
      [RANDOM, '3.6.2', 'linux_amd64', zips.random!],
    ]);
    const lock = lockFile('ok.lock.hcl', [
      [AWS, '5.31.0', [zips.aws!, zips.awsMac!]],
      [RANDOM, '3.6.2', [zips.random!]],
    ]);
    const r = await hubCli(
      'mirror',
      'publish',
      '--lock-file',
      lock,
      '--dir',
      dir,
      '--site',
      'ship-7',
      ...remote,
    );
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      /^published registry\.terraform\.io\/hashicorp\/aws 5\.31\.0 linux_amd64 → ship-7 \(publication \S+, 25 B\)$/m,
    );
    expect(r.stdout).toContain(
      'skipped registry.terraform.io/hashicorp/random 3.6.2 linux_amd64 → ship-7: the site reported having it',
    );
    const list = await fetch(`${t.url}/api/publications?site=ship-7`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const publications = (
      (await list.json()) as {
        publications: { name: string; fileKind: string; sha256: string; sites: string[] }[];
      }
    ).publications;
    expect(publications).toHaveLength(1);
    expect(publications[0]).toMatchObject({
      name: 'registry.terraform.io/hashicorp/aws/terraform-provider-aws_5.31.0_linux_amd64.zip',
      fileKind: 'provider-mirror',
      sha256: sha(zips.aws!),
      sites: ['ship-7'],
    });
  }, 120_000);

  it('sends the --platform asked for, and answers --json', async () => {
    const dir = mirrorDir('mirror-mac', [[AWS, '5.31.0', 'darwin_arm64', zips.awsMac!]]);
    const lock = lockFile('mac.lock.hcl', [[AWS, '5.31.0', [zips.aws!, zips.awsMac!]]]);
    const r = await hubCli(
      'mirror',
      'publish',
      '--lock-file',
      lock,
      '--dir',
      dir,
      '--site',
      'all',
      '--platform',
      'darwin_arm64',
      '--json',
      ...remote,
    );
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as {
      published: { build: string; sites: string[]; sha256: string }[];
      skipped: unknown[];
    };
    expect(out.published).toEqual([
      expect.objectContaining({
        build: `${AWS} 5.31.0 darwin_arm64`,
        sites: ['ship-7'],
        sha256: sha(zips.awsMac!),
      }),
    ]);
    expect(out.skipped).toEqual([]);
  }, 120_000);

  it("refuses a zip whose sha256 is not among the lock file's zh: hashes, and sends nothing", async () => {
    const before = await publicationNames();
    const dir = mirrorDir('tampered', [
      [AWS, '5.31.0', 'linux_amd64', Buffer.from('PK tampered')],
      [RANDOM, '3.6.2', 'linux_amd64', zips.random!],
    ]);
    const lock = lockFile('tampered.lock.hcl', [[AWS, '5.31.0', [zips.aws!]]]);
    const r = await hubCli(
      'mirror',
      'publish',
      '--lock-file',
      lock,
      '--dir',
      dir,
      '--site',
      'ship-7',
      ...remote,
    );
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /^hub mirror publish: registry\.terraform\.io\/hashicorp\/aws 5\.31\.0 linux_amd64: .* has sha256 [0-9a-f]{64}, which is not among the lock file's zh: hashes/,
    );
    expect(await publicationNames()).toEqual(before);
  }, 120_000);

  it('exits 2 with a clear message, sending nothing, for a bad lock file, a missing zip or a bad --dir', async () => {
    const before = await publicationNames();
    const dir = mirrorDir('partial', [[AWS, '5.31.0', 'linux_amd64', zips.aws!]]);
    const broken = join(work, 'broken.lock.hcl');
    writeFileSync(broken, `provider "${AWS}" {\n  version = 5.31.0\n}\n`);
    const cases: [string[], RegExp][] = [
      [
        ['--lock-file', broken, '--dir', dir],
        /does not parse: line 2: unexpected 5 after version = \(expected "…"\)|does not parse: line 2: unexpected character/,
      ],
      [['--lock-file', join(work, 'none.hcl'), '--dir', dir], /cannot read --lock-file .*ENOENT/],
      [
        [
          '--lock-file',
          lockFile('needs-tls.lock.hcl', [
            [AWS, '5.31.0', [zips.aws!]],
            ['registry.terraform.io/hashicorp/tls', '4.0.5', [zips.aws!]],
          ]),
          '--dir',
          dir,
        ],
        /tls 4\.0\.5 linux_amd64: .*terraform-provider-tls_4\.0\.5_linux_amd64\.zip is missing \(run `terraform providers mirror -platform=linux_amd64/,
      ],
      [
        [
          '--lock-file',
          lockFile('ok2.lock.hcl', [[AWS, '5.31.0', [zips.aws!]]]),
          '--dir',
          join(work, 'nope'),
        ],
        /--dir .* is not a directory/,
      ],
      [
        [
          '--lock-file',
          lockFile('ok3.lock.hcl', [[AWS, '5.31.0', [zips.aws!]]]),
          '--dir',
          dir,
          '--platform',
          'linux',
        ],
        /--platform "linux" is not <os>_<arch>/,
      ],
    ];
    for (const [args, want] of cases) {
      const r = await hubCli('mirror', 'publish', ...args, '--site', 'ship-7', ...remote);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(want);
    }
    expect(await publicationNames()).toEqual(before);
  }, 180_000);

  it("asks for --platform when a site has not reported one, and passes on the hub's word on an unknown site", async () => {
    const dir = mirrorDir('mirror-x', [[AWS, '5.31.0', 'linux_amd64', zips.aws!]]);
    const lock = lockFile('x.lock.hcl', [[AWS, '5.31.0', [zips.aws!]]]);
    const unknown = await hubCli(
      'mirror',
      'publish',
      '--lock-file',
      lock,
      '--dir',
      dir,
      '--site',
      'ship-9',
      ...remote,
    );
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('the hub answered 404 not-found: no enrolled agent at site(s) ship-9');
    const [agent] = await t.hub.store.listAgents();
    await t.hub.store.commit({ agents: [{ ...agent!, platform: null }] });
    try {
      const r = await hubCli(
        'mirror',
        'publish',
        '--lock-file',
        lock,
        '--dir',
        dir,
        '--site',
        'ship-7',
        ...remote,
      );
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('site ship-7 has not reported its platform yet: give --platform');
    } finally {
      await t.hub.store.commit({ agents: [agent!] });
    }
  }, 60_000);

  it('prints help with an example', async () => {
    const r = await hubCli('mirror', 'publish', '--help');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Example:');
    expect(r.stdout).toContain(
      'hub mirror publish --lock-file .terraform.lock.hcl --dir ./mirror --site ship-7',
    );
  }, 60_000);
});
