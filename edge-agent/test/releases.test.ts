/**
 * The `agent-release` publication kind at the agent: which releases it refuses before fetching a byte, how it
 * unpacks one it takes (safely, next to the running version), and `current` switched only when asked.
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compareVersions, parseReleaseName } from '../src/adapters/releases/checks.js';
import { placedReleases } from '../src/adapters/releases/placed.js';
import { releaseSink } from '../src/adapters/releases/releaseSink.js';
import type { ReleasesConfig } from '../src/configReleases.js';
import { type Member, releaseMembers, tarGz } from './helpers/releaseTarball.js';

const base = mkdtempSync(join(tmpdir(), 'agent-releases-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));
const quiet = { info: () => {}, warn: () => {} };
let n = 0;

function setUp(over: Partial<ReleasesConfig> = {}) {
  const dir = join(base, `root-${++n}`);
  mkdirSync(dir);
  const config: ReleasesConfig = {
    install: true,
    dir,
    switch: false,
    maxBytes: 1 << 20,
    maxEntries: 100,
    ...over,
  };
  const sink = releaseSink({ config, runningVersion: '0.1.0', arch: 'x64', log: quiet });
  /** Offers `members` as the verified bundle file `name`. */
  const offer = (name: string, members: Member[] | Buffer) => {
    const path = join(base, `bundle-${++n}`);
    writeFileSync(path, Buffer.isBuffer(members) ? members : tarGz(members));
    return sink.apply({ sha256: '0'.repeat(64), name, path });
  };
  return { dir, sink, offer };
}
const NAME = (v: string, arch = 'x64') => `driftline-edge-${v}-linux-${arch}.tar.gz`;

describe('agent-release names and versions', () => {
  it('parses what npm run package names, and orders versions with pre-releases before their release', () => {
    expect(parseReleaseName('driftline-edge-1.2.3-linux-x64.tar.gz')).toEqual({
      version: '1.2.3',
      arch: 'x64',
    });
    expect(parseReleaseName('driftline-edge-1.2.3-rc.1-linux-arm64.tar.gz')).toEqual({
      version: '1.2.3-rc.1',
      arch: 'arm64',
    });
    expect(parseReleaseName('driftline-edge-1.2-linux-x64.tar.gz')).toBeNull();
    expect(parseReleaseName('../driftline-edge-1.2.3-linux-x64.tar.gz')).toBeNull();
    expect(compareVersions('0.10.0', '0.9.9')).toBe(1);
    expect(compareVersions('1.2.0-rc.1', '1.2.0')).toBe(-1);
    expect(compareVersions('1.2.0', '1.2.0')).toBe(0);
  });

  it('refuses before any byte is fetched: not installing, not a release, another CPU, not newer, already placed', () => {
    expect(setUp({ install: false }).sink.refuse(NAME('0.2.0'))).toMatch(/releases\.install is not true/);
    const { sink, dir } = setUp();
    expect(sink.refuse('agent.tar.gz')).toMatch(/not a driftline-edge release/);
    expect(sink.refuse(NAME('0.2.0', 'arm64'))).toBe(
      'it is built for linux-arm64, this machine is linux-x64',
    );
    expect(sink.refuse(NAME('0.1.0'))).toBe('version 0.1.0 is not newer than the running 0.1.0');
    expect(sink.refuse(NAME('0.0.9'))).toBe('version 0.0.9 is not newer than the running 0.1.0');
    mkdirSync(join(dir, 'releases', '0.2.0'), { recursive: true });
    expect(sink.refuse(NAME('0.2.0'))).toMatch(/^version 0\.2\.0 is already placed in /);
    expect(sink.refuse(NAME('0.3.0'))).toBeNull();
  });
});

describe('placing an agent release', () => {
  it('unpacks a verified release into releases/<version>/ with its modes, and leaves current alone', async () => {
    const { dir, offer } = setUp();
    symlinkSync('releases/0.1.0', join(dir, 'current'));
    expect(await offer(NAME('0.2.0'), releaseMembers('0.2.0'))).toEqual({ ok: true });
    const rel = join(dir, 'releases', '0.2.0');
    expect(readFileSync(join(rel, 'VERSION'), 'utf8')).toBe('0.2.0\n');
    expect(readdirSync(rel).sort()).toEqual(['SHA256SUMS', 'VERSION', 'bin', 'lib', 'node']);
    expect(readdirSync(join(dir, 'releases'))).toEqual(['0.2.0']); // no staging folder left
    const { statSync } = await import('node:fs');
    expect(statSync(join(rel, 'bin', 'edge-agent')).mode & 0o777).toBe(0o755);
    expect(statSync(join(rel, 'VERSION')).mode & 0o777).toBe(0o644);
    expect(readlinkSync(join(dir, 'current'))).toBe('releases/0.1.0');
    expect(placedReleases(dir)).toMatchObject({
      placed: ['0.2.0'],
      current: null,
      currentTarget: 'releases/0.1.0',
    });
  });

  it('with releases.switch repoints current at the new release (one rename, no temporary left)', async () => {
    const { dir, offer } = setUp({ switch: true });
    symlinkSync('releases/0.1.0', join(dir, 'current'));
    expect(await offer(NAME('0.2.0'), releaseMembers('0.2.0'))).toEqual({ ok: true });
    expect(readlinkSync(join(dir, 'current'))).toBe(join('releases', '0.2.0'));
    expect(readdirSync(dir).sort()).toEqual(['current', 'releases']);
    expect(placedReleases(dir)).toMatchObject({ placed: ['0.2.0'], current: '0.2.0' });
  });

  it.each([
    [
      'a file changed after SHA256SUMS was made',
      releaseMembers('0.2.0', { tamper: true }),
      /lib\/edge-agent\.mjs does not match SHA256SUMS/,
    ],
    [
      'a file SHA256SUMS does not list',
      releaseMembers('0.2.0', { unlisted: [{ path: 'lib/extra.js', body: 'x' }] }),
      /lib\/extra\.js is not listed in SHA256SUMS/,
    ],
    [
      'a launcher for another CPU',
      releaseMembers('0.2.0', { unameM: 'aarch64' }),
      /launcher is for aarch64, this machine is x86_64/,
    ],
    [
      'a Node for another CPU',
      releaseMembers('0.2.0', { machine: 0xb7 }),
      /node\/bin\/node is for ELF machine 0xb7/,
    ],
    [
      'a VERSION that is not its name',
      releaseMembers('0.3.0'),
      /VERSION says "0\.3\.0", its name says 0\.2\.0/,
    ],
    ['an absolute path', [...releaseMembers('0.2.0'), { path: '/etc/cron.d/x', body: 'x' }], /absolute path/],
    [
      'a path climbing out',
      [...releaseMembers('0.2.0'), { path: 'lib/../../x', body: 'x' }],
      /climbs out with '\.\.'/,
    ],
    [
      'a symlink out',
      [{ path: 'lib/out', type: '2', link: '../../../etc' }, ...releaseMembers('0.2.0')],
      /symlink "lib\/out" points at "\.\.\/\.\.\/\.\.\/etc", outside/,
    ],
    [
      'an absolute symlink',
      [{ path: 'lib/out', type: '2', link: '/etc' }, ...releaseMembers('0.2.0')],
      /points at "\/etc", outside/,
    ],
    [
      'a hard link',
      [{ path: 'lib/h', type: '1', link: 'VERSION' }, ...releaseMembers('0.2.0')],
      /is a hard link/,
    ],
    ['a device', [{ path: 'lib/d', type: '3' }, ...releaseMembers('0.2.0')], /device, fifo or other/],
    [
      'a member twice',
      [...releaseMembers('0.2.0'), { path: 'VERSION', body: '0.2.0\n' }],
      /"VERSION" appears twice/,
    ],
    [
      'more bytes than releases.maxBytes',
      [{ path: 'big', body: Buffer.alloc((1 << 20) + 1) }, ...releaseMembers('0.2.0')],
      /more than 1048576 bytes \(releases\.maxBytes\)/,
    ],
    [
      'more entries than releases.maxEntries',
      [...Array.from({ length: 101 }, (_, i) => ({ path: `f${i}`, body: '' })), ...releaseMembers('0.2.0')],
      /more than 100 entries \(releases\.maxEntries\)/,
    ],
  ])('refuses %s, with the reason, and leaves nothing behind', async (_what, members, reason) => {
    const { dir, offer } = setUp();
    const r = await offer(NAME('0.2.0'), members as Member[]);
    expect(r.ok).toBe(false);
    expect((r as { reason: string }).reason).toMatch(/^release 0\.2\.0 refused: /);
    expect((r as { reason: string }).reason).toMatch(reason as RegExp);
    expect(readdirSync(join(dir, 'releases'))).toEqual([]);
    expect(existsSync(join(base, 'etc'))).toBe(false);
  });

  it('refuses bytes that are not a gzip’d tar, and a truncated one', async () => {
    const { offer, dir } = setUp();
    const notGz = await offer(NAME('0.2.0'), Buffer.from('hello'));
    expect(notGz).toMatchObject({ ok: false, reason: expect.stringMatching(/not a gzip'd tar/) });
    const { gunzipSync, gzipSync } = await import('node:zlib');
    const whole = gunzipSync(tarGz(releaseMembers('0.2.0')));
    const cut = await offer(NAME('0.2.0'), gzipSync(whole.subarray(0, 700)));
    expect(cut).toMatchObject({ ok: false, reason: expect.stringMatching(/truncated/) });
    expect(readdirSync(join(dir, 'releases'))).toEqual([]);
  });
});
