import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkProviderZip, entryNameProblem } from './checkProviderZip.js';
import { hasZipProgram, writeZip, type ZipEntry } from './testZip.js';

const root = mkdtempSync(join(tmpdir(), 'provider-zip-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const ZIP = hasZipProgram();
let n = 0;

/**
 * A zip of `entries`, made by the system `zip` program from real files (symlinks stored as links with
 * -y) when it is installed, else by the test writer. Names with `..` are made relative to a subfolder.
 */
function zipOf(entries: ZipEntry[]): string {
  const out = join(root, `z${n++}.zip`);
  if (!ZIP || entries.some((e) => e.name.startsWith('/'))) {
    writeFileSync(out, writeZip(entries));
    return out;
  }
  const work = join(root, `w${n}`, 'in');
  mkdirSync(work, { recursive: true });
  for (const e of entries) {
    const p = join(work, e.name);
    mkdirSync(join(p, '..'), { recursive: true });
    if ('symlinkTo' in e) symlinkSync(e.symlinkTo, p);
    else writeFileSync(p, e.data ?? '');
  }
  const r = spawnSync('zip', ['-q', '-y', out, ...entries.map((e) => e.name)], {
    cwd: work,
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`zip failed: ${r.stderr}`);
  return out;
}

const provider: ZipEntry[] = [
  { name: 'terraform-provider-aws_v5.31.0_x5', data: 'ELF…'.repeat(100) },
  { name: 'LICENSE.txt', data: 'MPL-2.0' },
  { name: 'docs/README.md', data: '# aws' },
];

describe(`checkProviderZip (zips from ${ZIP ? 'the zip program' : 'the test writer'})`, () => {
  it('accepts a provider package: plain files, a subfolder', async () => {
    expect(await checkProviderZip(zipOf(provider))).toBeNull();
    expect(await checkProviderZip(join(root, 'w.zip'), {})).toMatch(/^cannot read .*ENOENT/);
  });

  it('refuses an entry that is a symbolic link', async () => {
    const p = zipOf([...provider, { name: 'link', symlinkTo: '/etc/passwd' }]);
    expect(await checkProviderZip(p)).toBe(
      'entry "link" is a symbolic link; provider packages may not hold links',
    );
    const written = join(root, 'written-link.zip');
    writeFileSync(written, writeZip([{ name: 'x', symlinkTo: '../../..' }]));
    expect(await checkProviderZip(written)).toMatch(/is a symbolic link/);
  });

  it('refuses a ../evil entry and an absolute one', async () => {
    expect(await checkProviderZip(zipOf([...provider, { name: '../evil', data: 'x' }]))).toBe(
      'entry "../evil" has a ".." segment; entries must stay inside the mirror directory',
    );
    expect(await checkProviderZip(zipOf([{ name: '/etc/cron.d/x', data: 'x' }]))).toMatch(
      /^entry "\/etc\/cron.d\/x" has an absolute path/,
    );
  });

  it('judges names with either slash, drive letters and NUL bytes', () => {
    expect(entryNameProblem('a\\..\\b')).toMatch(/"\.\." segment/);
    expect(entryNameProblem('C:/Windows/x')).toMatch(/absolute path/);
    expect(entryNameProblem('\\\\server\\share')).toMatch(/absolute path/);
    expect(entryNameProblem('a\0b')).toMatch(/NUL byte/);
    expect(entryNameProblem('')).toMatch(/empty name/);
    expect(entryNameProblem('..a/b..')).toBeNull();
  });

  it('says "not a zip archive" for other files, an empty file and trailing garbage', async () => {
    const text = join(root, 'plan.txt');
    writeFileSync(text, 'terraform-provider-aws is not a zip\n'.repeat(10));
    expect(await checkProviderZip(text)).toBe('not a zip archive');
    writeFileSync(join(root, 'empty'), '');
    expect(await checkProviderZip(join(root, 'empty'))).toBe('not a zip archive');
    const trailing = join(root, 'trailing.zip');
    writeFileSync(trailing, Buffer.concat([readFileSync(zipOf(provider)), Buffer.from('garbage')]));
    expect(await checkProviderZip(trailing)).toBe('not a zip archive');
  });

  it('refuses a central directory that points outside the file or is cut short', async () => {
    const good = writeZip(provider);
    const outside = Buffer.from(good);
    outside.writeUInt32LE(good.length * 2, good.length - 6); // central directory offset
    writeFileSync(join(root, 'outside.zip'), outside);
    expect(await checkProviderZip(join(root, 'outside.zip'))).toMatch(/outside the file/);
    const damaged = Buffer.from(good);
    const cdOffset = good.readUInt32LE(good.length - 6);
    damaged.writeUInt32LE(0xdeadbeef, cdOffset + 46 + 'terraform-provider-aws_v5.31.0_x5'.length);
    writeFileSync(join(root, 'damaged.zip'), damaged);
    expect(await checkProviderZip(join(root, 'damaged.zip'))).toBe(
      'not a zip archive (central directory entry 2 is damaged)',
    );
  });

  it('caps the entries and the bytes they unpack to, from the central directory alone', async () => {
    const many = zipOf(Array.from({ length: 30 }, (_, i) => ({ name: `f${i}`, data: 'x' })));
    expect(await checkProviderZip(many, { maxEntries: 29 })).toBe(
      'the archive has 30 entries; at most 29 are accepted',
    );
    expect(await checkProviderZip(many, { maxEntries: 30 })).toBeNull();
    // A "bomb": the central directory declares 4 GiB - 1 for an entry of a few bytes.
    const bomb = writeZip([{ name: 'big', data: 'x' }]);
    bomb.writeUInt32LE(0xfffffffe, bomb.readUInt32LE(bomb.length - 6) + 24);
    writeFileSync(join(root, 'bomb.zip'), bomb);
    expect(await checkProviderZip(join(root, 'bomb.zip'), { maxUncompressedBytes: 1024 ** 3 })).toBe(
      'the archive unpacks to over 1073741824 bytes',
    );
    expect(await checkProviderZip(zipOf(provider), { maxUncompressedBytes: 100 })).toMatch(/over 100 bytes/);
  });

  it('refuses ZIP64 markers rather than guessing', async () => {
    const z = writeZip(provider);
    z.writeUInt16LE(0xffff, z.length - 12);
    z.writeUInt16LE(0xffff, z.length - 14);
    writeFileSync(join(root, 'z64.zip'), z);
    expect(await checkProviderZip(join(root, 'z64.zip'))).toMatch(/ZIP64/);
  });
});
