import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { constants, createBrotliCompress } from 'node:zlib';
import { CURSOR_HEADER, encodeBatch } from '@driftline/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * A 200 MB downlink answer is refused at the client's 64 MiB cap, and reading it grows the reading
 * process's peak memory by at most 1.2 times the cap (docs/decisions/413-downlink-reads-stream.md): a
 * real process (fixtures/readHugeDownlink.ts) reads it from a real server, plain with and without a
 * length, and as a brotli bomb.
 */

const MiB = 1024 * 1024;
const CAP = 64 * MiB;
const HUGE = 200 * MiB;
let server: Server;
let url = '';
let bomb: Buffer;
let mode: 'chunked' | 'length' | 'br' | 'raw-br' = 'chunked';

async function brotliZeros(bytes: number): Promise<Buffer> {
  const z = createBrotliCompress({ params: { [constants.BROTLI_PARAM_QUALITY]: 1 } });
  const out: Buffer[] = [];
  z.on('data', (c: Buffer) => out.push(c));
  const done = new Promise((r) => z.on('end', r));
  const block = Buffer.alloc(MiB);
  for (let n = 0; n < bytes; n += MiB) if (!z.write(block)) await new Promise((r) => z.once('drain', r));
  z.end();
  await done;
  return Buffer.concat(out);
}

beforeAll(async () => {
  // bounded by the hook's own timeout
  bomb = await brotliZeros(HUGE);
  // a normal page: a batch of 64 bundles of 64 KiB (4 MiB)
  const warm = Buffer.from(encodeBatch(Array.from({ length: 64 }, () => new Uint8Array(64 * 1024).fill(7))));
  server = createServer((req, res) => {
    if (req.url?.includes('for=warm')) {
      res.writeHead(200, { [CURSOR_HEADER]: '1' });
      return res.end(warm);
    }
    if (mode === 'br' || mode === 'raw-br') {
      // raw: brotli bytes without a Content-Encoding, which the client inflates itself
      res.writeHead(200, { [CURSOR_HEADER]: '2', ...(mode === 'br' ? { 'content-encoding': 'br' } : {}) });
      return res.end(bomb);
    }
    res.writeHead(200, {
      [CURSOR_HEADER]: '2',
      ...(mode === 'length' ? { 'content-length': String(HUGE) } : {}),
    });
    const chunk = Buffer.alloc(MiB, 0x44);
    let sent = 0;
    const more = () => {
      while (sent < HUGE && !res.destroyed) {
        sent += MiB;
        if (!res.write(chunk)) return void res.once('drain', more);
      }
      res.end();
    };
    res.on('close', () => {
      sent = HUGE;
    });
    more();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}, 60_000);
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

function readHuge(): Promise<{ ok: boolean; message: string; growthBytes: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', join(import.meta.dirname, 'fixtures/readHugeDownlink.ts'), url],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
    });
    child.on('exit', (code) => {
      try {
        resolve(JSON.parse(out));
      } catch {
        reject(new Error(`reader exited ${code}: ${err.slice(-2000)}`));
      }
    });
  });
}

describe('a downlink answer far over the cap', { timeout: 120_000 }, () => {
  it.each(['chunked', 'length', 'br', 'raw-br'] as const)(
    'is refused (%s) and costs at most 1.2 times the cap',
    async (m) => {
      mode = m;
      const r = await readHuge();
      expect(r.ok).toBe(false);
      expect(r.message).toMatch(/over 67108864 bytes once inflated; refused/);
      console.log(`${m}: grew ${(r.growthBytes / MiB).toFixed(1)} MiB for a ${CAP / MiB} MiB cap`);
      expect(r.growthBytes).toBeLessThanOrEqual(1.2 * CAP);
      // a length over the cap is refused before a byte of the body is read
      if (m === 'length') expect(r.growthBytes).toBeLessThan(0.1 * CAP);
    },
  );
});
