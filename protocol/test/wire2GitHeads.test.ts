import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateSigningKeyPair } from '../src/keys.js';
import { encodeUlid } from '../src/ulid.js';
import { MAX_GIT_HEADS, packGitHeads, unpackGitHeads } from '../src/wire2/gitHeads.js';
import { bodyFromValue, bodyToValue } from '../src/wire2/kinds.js';
import { decodeMessage, encodeMessage } from '../src/wire2/message.js';
import { manifestOfPublication, publicationBody } from '../src/wire2/publication.js';

/** Real bundles from the system git (decision 520: the packed form must rebuild git's file exactly). */
const dir = mkdtempSync(join(tmpdir(), 'git-heads-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const git = (...args: string[]) =>
  execFileSync('git', ['-c', 'user.email=hq@example.org', '-c', 'user.name=hq', ...args], {
    cwd: dir,
    encoding: 'utf8',
  }).trim();
git('init', '-q', '-b', 'main');
writeFileSync(join(dir, 'main.tf'), 'resource "null_resource" "a" {}\n'.repeat(40));
git('add', '.');
git('commit', '-qm', 'main');
const base = git('rev-parse', 'HEAD');
git('checkout', '-qb', 'pr/1');
writeFileSync(
  join(dir, 'main.tf'),
  `${'resource "null_resource" "b" {}\n'.repeat(3)}${readFileSync(join(dir, 'main.tf'), 'utf8')}`,
);
git('commit', '-qam', 'three lines, and a subject with ünïcode');
const bundle = (name: string, ...revs: string[]) => {
  git('bundle', 'create', '-q', join(dir, name), ...revs);
  return new Uint8Array(readFileSync(join(dir, name)));
};
const incremental = bundle('inc.bundle', 'pr/1', `^${base}`);
const full = bundle('full.bundle', 'main', 'pr/1');

describe("a git bundle's heads packed (decision 520)", () => {
  it('rebuilds an incremental and a full bundle byte for byte, 16 B of text and 20 B per id smaller', () => {
    for (const file of [incremental, full]) {
      const p = packGitHeads(file);
      if (!p) throw new Error('not packed');
      expect(unpackGitHeads(p.heads, p.pack)).toEqual(file);
      const text = new TextDecoder().decode(file.subarray(0, file.length - p.pack.length));
      const lines = text.split('\n').slice(1, -2); // less the first line and the blank one
      const prerequisites = lines.filter((l) => l.startsWith('-')).length;
      // each line: 20 B of hex, its newline and its '-' gone, a kind and a length byte come
      expect(text.length - p.heads.length).toBe(16 + 1 + 19 * lines.length + prerequisites);
    }
    // the incremental names its prerequisite: 1 prerequisite, 1 ref
    expect(packGitHeads(incremental)?.heads[0]).toBe(0);
  });

  it('leaves as they are files it would not rebuild exactly: not a v2 bundle, upper-case ids, no blank line', () => {
    const text = new TextEncoder();
    expect(packGitHeads(text.encode('# v3 git bundle\n@object-format=sha256\n\nPACK'))).toBeNull();
    expect(
      packGitHeads(text.encode(`# v2 git bundle\n${'A'.repeat(40)} refs/heads/main\n\nPACK`)),
    ).toBeNull();
    expect(packGitHeads(text.encode(`# v2 git bundle\n${'a'.repeat(40)} refs/heads/main\n`))).toBeNull();
    expect(packGitHeads(text.encode(`# v2 git bundle\n${'a'.repeat(39)}\n\nPACK`))).toBeNull();
    const many = Array.from({ length: MAX_GIT_HEADS + 1 }, (_, i) => `${'a'.repeat(40)} refs/heads/b${i}\n`);
    expect(packGitHeads(text.encode(`# v2 git bundle\n${many.join('')}\nPACK`))).toBeNull();
  });

  it('refuses packed heads that do not parse: a bad kind, a short id, a rest past the end, a newline', () => {
    const pack = new Uint8Array([0x50]);
    expect(unpackGitHeads(new Uint8Array([2, ...new Uint8Array(21)]), pack)).toBeNull();
    expect(unpackGitHeads(new Uint8Array([1, ...new Uint8Array(10)]), pack)).toBeNull();
    expect(unpackGitHeads(new Uint8Array([1, ...new Uint8Array(20), 5, 0x20]), pack)).toBeNull();
    expect(unpackGitHeads(new Uint8Array([1, ...new Uint8Array(20), 1, 0x0a]), pack)).toBeNull();
    expect(unpackGitHeads(new Uint8Array(), pack)).toBeNull();
  });

  it('travels in a compact publication as field 9, and reads back as the very file (its sha256, its size)', async () => {
    const hub = await generateSigningKeyPair();
    const m = {
      publicationId: encodeUlid(1_764_460_800_000, new Uint8Array(10).fill(7)),
      name: 'infra',
      fileKind: 'git' as const,
      sha256: '',
      size: incremental.length,
      inline: incremental,
    };
    const plain = publicationBody(m);
    const packed = publicationBody({ ...m, packGitHeads: true });
    if (!plain || !packed?.gitHeads) throw new Error('no compact body');
    const encode = (body: typeof plain) =>
      encodeMessage({ kind: 'publication', from: 0, to: 7, seq: 1, body }, hub.privateKey);
    const [a, b] = [await encode(plain), await encode(packed)];
    // git's 121-byte header (one prerequisite, one ref) as 65 B, with field 9's 3 B of framing
    expect(a.length - b.length).toBeGreaterThanOrEqual(50);
    const d = decodeMessage(b);
    if (!d.ok) throw new Error(d.error.message);
    const sha = (x: Uint8Array) =>
      x.length === incremental.length && x.every((v, i) => v === incremental[i]) ? 'the file' : 'not it';
    expect(manifestOfPublication(d.value.body as typeof packed, sha)).toMatchObject({
      sha256: 'the file',
      size: incremental.length,
      inline: incremental,
    });
    // not a git file, or packing asked of a file it would not rebuild: the file goes as it is
    expect(publicationBody({ ...m, fileKind: 'file', packGitHeads: true })?.gitHeads).toBeUndefined();
    const odd = new TextEncoder().encode('not a bundle');
    expect(publicationBody({ ...m, inline: odd, packGitHeads: true })?.inline).toEqual(odd);
  });

  it('refuses field 9 without an inline git file, or heads that do not unpack', () => {
    const p = packGitHeads(incremental);
    if (!p) throw new Error('not packed');
    const body = { id: new Uint8Array(16), name: 'infra', fileKind: 5, inline: p.pack, gitHeads: p.heads };
    expect(bodyFromValue('publication', bodyToValue('publication', body))).toMatchObject({ ok: true });
    for (const bad of [
      { ...body, fileKind: 0 },
      { ...body, gitHeads: new Uint8Array([9, 9]) },
      { id: body.id, name: 'infra', fileKind: 5, sha256: new Uint8Array(32), size: 3, gitHeads: p.heads },
    ]) {
      const r = bodyFromValue('publication', bodyToValue('publication', bad));
      expect(r).toMatchObject({ ok: false });
      expect((r as { reason: string }).reason).toMatch(/field 9 \(gitHeads\)/);
    }
  });
});
