import { createHash, randomBytes } from 'node:crypto';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { createHopServer, type HopServer, MemoryHopBackend } from '@driftline/hop';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpUplink } from '../src/adapters/http/HttpUplink.js';
import { memoryUrlStorage } from './helpers/memoryUrlStorage.js';
import { tempDir } from './helpers/storeFixtures.js';

const MiB = 1024 * 1024;
const PATCH_LINE = Buffer.from('PATCH /v1/uploads/');

/** A TCP hop in front of the server: counts request bytes and PATCHes, and can cut after `cutAt` bytes. */
class CuttingProxy {
  requestBytes = 0;
  patches = 0;
  cutAt = Number.POSITIVE_INFINITY;
  port = 0;
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();

  constructor(targetPort: number) {
    this.server = createServer((client) => {
      const upstream = connect({ host: '127.0.0.1', port: targetPort });
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => {});
      }
      upstream.on('data', (b: Buffer) => client.write(b));
      upstream.on('end', () => client.end());
      client.on('data', (b: Buffer) => {
        for (let at = b.indexOf(PATCH_LINE); at >= 0; at = b.indexOf(PATCH_LINE, at + 1)) this.patches++;
        const room = this.cutAt - this.requestBytes;
        if (b.length < room) {
          this.requestBytes += b.length;
          upstream.write(b);
          return;
        }
        // The link goes down: what fits reaches the server, the client sees a reset.
        this.requestBytes += room;
        this.cutAt = Number.POSITIVE_INFINITY;
        upstream.end(b.subarray(0, room));
        client.resetAndDestroy();
      });
    });
  }

  async listen(): Promise<void> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.port = (this.server.address() as { port: number }).port;
  }

  close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    return new Promise((r) => this.server.close(() => r()));
  }
}

const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

async function setup() {
  const backend = new MemoryHopBackend({ name: 'test-hub', role: 'hub' });
  backend.addToken('agent-token', { name: 'ship-7', sites: ['ship-7'] });
  const hop: HopServer = createHopServer(backend, { uploads: { directory: tempDir('driftline-tus-') } });
  const { port } = await hop.listen(0, '127.0.0.1');
  cleanup.push(() => hop.close());
  const proxy = new CuttingProxy(port);
  await proxy.listen();
  cleanup.push(() => proxy.close());
  const uplink = new HttpUplink({
    url: `http://127.0.0.1:${proxy.port}`,
    token: 'agent-token',
    urlStorage: memoryUrlStorage(),
  });
  return { backend, proxy, uplink };
}

function blobOf(size: number) {
  const data = randomBytes(size);
  return {
    sha256: createHash('sha256').update(data).digest('hex'),
    size,
    contentType: 'application/octet-stream',
    data,
  };
}

describe('HttpUplink blob uploads', () => {
  it('sends a 20 MiB blob in one PATCH, so the link is not left idle for a round trip per chunk', async () => {
    const { backend, proxy, uplink } = await setup();
    const blob = blobOf(20 * MiB);
    expect(await uplink.uploadBlob(blob)).toEqual({ ok: true, value: undefined });
    expect(proxy.patches).toBe(1);
    expect(backend.blobData.get(blob.sha256)?.bytes.equals(blob.data)).toBe(true);
  });

  it('resumes a PATCH cut mid-body from the bytes the server kept, not from the start of the request', async () => {
    const { backend, proxy, uplink } = await setup();
    const blob = blobOf(4 * MiB);
    proxy.cutAt = 3 * MiB;
    const first = await uplink.uploadBlob(blob);
    expect(first.ok).toBe(false);
    const before = proxy.requestBytes;

    expect(await uplink.uploadBlob(blob)).toEqual({ ok: true, value: undefined });
    // About 1 MiB is left (plus what the server had not yet written when cut); resuming from the start
    // of the PATCH would send 4 MiB again.
    const resent = proxy.requestBytes - before;
    expect(resent).toBeGreaterThan(blob.size - 3 * MiB);
    expect(resent).toBeLessThan(blob.size - 3 * MiB + 256 * 1024);
    expect(backend.blobData.get(blob.sha256)?.bytes.equals(blob.data)).toBe(true);
  });
});
