import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { BlobFiles } from '../src/ports/BlobFiles.js';

/** A fresh adapter for one test. */
export type BlobFilesSetup = () => Promise<{ blobs: BlobFiles; done: () => Promise<void> }>;

const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

async function collect(s: NodeJS.ReadableStream): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of s) parts.push(Buffer.from(c as Uint8Array));
  return Buffer.concat(parts);
}

/**
 * What every `BlobFiles` adapter promises (ports/BlobFiles.ts): `FileBlobs` (a directory) and
 * `MemoryBlobFiles` both run it.
 */
export function runBlobFilesContract(name: string, setup: BlobFilesSetup): void {
  describe(`BlobFiles contract: ${name}`, () => {
    const undo: (() => Promise<void>)[] = [];
    afterEach(async () => {
      for (const f of undo.splice(0).reverse()) await f();
    });
    const open = async () => {
      const s = await setup();
      const uploads = mkdtempSync(join(tmpdir(), 'hub-uploads-'));
      undo.push(s.done, async () => rmSync(uploads, { recursive: true, force: true }));
      /** A finished upload of `bytes` (the file hop's tus endpoint leaves), and its sha256. */
      const upload = (bytes: Uint8Array) => {
        const path = join(uploads, randomBytes(6).toString('hex'));
        writeFileSync(path, bytes);
        return { path, sha256: sha(bytes) };
      };
      return { b: s.blobs, upload };
    };

    it('moves a finished upload in and answers its size, a strong etag and its bytes', async () => {
      const { b, upload } = await open();
      const bytes = randomBytes(1000);
      const u = upload(bytes);
      expect(typeof (await b.adopt(u.sha256, u.path))).toBe('string');
      expect(existsSync(u.path)).toBe(false);
      expect(await b.stat(u.sha256)).toEqual({
        size: 1000,
        etag: `"${u.sha256}"`,
        mtimeMs: expect.any(Number),
      });
      expect(Buffer.from((await b.readAll(u.sha256)) ?? []).equals(bytes)).toBe(true);
    });

    it('reads the bytes from start to end, both included', async () => {
      const { b, upload } = await open();
      const bytes = randomBytes(4096);
      const u = upload(bytes);
      await b.adopt(u.sha256, u.path);
      expect((await collect(b.read(u.sha256, 0, 4095))).equals(bytes)).toBe(true);
      expect((await collect(b.read(u.sha256, 100, 199))).equals(bytes.subarray(100, 200))).toBe(true);
      expect((await collect(b.read(u.sha256, 4095, 4095))).equals(bytes.subarray(4095))).toBe(true);
    });

    it('keeps one copy when the same blob is adopted again', async () => {
      const { b, upload } = await open();
      const bytes = randomBytes(100);
      const first = upload(bytes);
      await b.adopt(first.sha256, first.path);
      const again = upload(bytes);
      await b.adopt(again.sha256, again.path);
      expect(existsSync(again.path)).toBe(false);
      expect(await b.stat(first.sha256)).toMatchObject({ size: 100 });
      expect(Buffer.from((await b.readAll(first.sha256)) ?? []).equals(bytes)).toBe(true);
    });

    it('answers null for a blob it does not hold, and a read of one fails', async () => {
      const { b } = await open();
      const missing = 'e'.repeat(64);
      expect(await b.stat(missing)).toBeNull();
      expect(await b.readAll(missing)).toBeNull();
      await expect(collect(b.read(missing, 0, 10))).rejects.toThrow();
    });

    it('refuses a name that is not a sha256 (never a path of its own choosing) and a missing upload', async () => {
      const { b, upload } = await open();
      const u = upload(randomBytes(10));
      await expect(b.adopt('../escape', u.path)).rejects.toThrow(/not a sha256/);
      expect(existsSync(u.path)).toBe(true);
      expect(await b.stat('../escape')).toBeNull();
      expect(await b.readAll('../escape')).toBeNull();
      expect(() => b.read('../escape', 0, 1)).toThrow(/not a sha256/);
      await expect(b.adopt('f'.repeat(64), `${u.path}.gone`)).rejects.toThrow();
      expect(await b.stat('f'.repeat(64))).toBeNull();
    });
  });
}
