import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type BlobManifest,
  type BundleHeader,
  cryptoRandomBytes,
  type DocPublicationState,
  encodeBundle,
  generateSigningKeyPair,
  monotonicUlid,
} from '@driftline/protocol';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpUplink } from '../src/adapters/http/HttpUplink.js';
import { FsPublicationFiles } from '../src/adapters/publications/FsPublicationFiles.js';
import { HttpBlobSource } from '../src/adapters/publications/HttpBlobSource.js';
import { SqlitePublicationLedger } from '../src/adapters/publications/SqlitePublicationLedger.js';
import { openSqliteLedger } from '../src/adapters/sqlite/openSqliteLedger.js';
import { SqliteUrlStorage } from '../src/adapters/tus/SqliteUrlStorage.js';
import { PublicationReceiver } from '../src/core/publications/PublicationReceiver.js';
import { SyncEngine } from '../src/core/sync/SyncEngine.js';
import { TestHub } from './helpers/testHub.js';

const cleanup: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0)) await f();
});

/** A Range server for one blob that cuts the connection after `dropEvery` bytes, counting bytes sent. */
async function blobServer(data: Buffer, dropEvery = Number.POSITIVE_INFINITY) {
  const stats = { bytes: 0, requests: 0 };
  const server: Server = createServer((req, res) => {
    stats.requests++;
    const m = /bytes=(\d+)-(\d*)/.exec(req.headers.range ?? '');
    const start = m ? Number(m[1]) : 0;
    const end = m?.[2] ? Math.min(Number(m[2]), data.length - 1) : data.length - 1;
    res.writeHead(m ? 206 : 200, { 'content-length': end - start + 1 });
    let sentHere = 0;
    const body = data.subarray(start, end + 1);
    for (let i = 0; i < body.length; i += 64 * 1024) {
      const part = body.subarray(i, i + 64 * 1024);
      if (sentHere + part.length > dropEvery) {
        const n = dropEvery - sentHere;
        stats.bytes += n;
        // cut once those bytes have left (destroying at once would drop them unsent)
        res.write(part.subarray(0, n), () => res.socket?.destroy());
        return;
      }
      res.write(part);
      sentHere += part.length;
      stats.bytes += part.length;
    }
    res.end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanup.push(() => new Promise<void>((r) => server.close(() => r())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, stats };
}

/** A Range server for several blobs at `/v1/blobs/:sha256`, counting requests and bytes per blob. */
async function blobsServer(blobs: Buffer[]) {
  const byHash = new Map(blobs.map((b) => [createHash('sha256').update(b).digest('hex'), b]));
  const stats = new Map<string, { requests: number; bytes: number }>();
  const server: Server = createServer((req, res) => {
    const sha = req.url?.split('/').pop() ?? '';
    const data = byHash.get(sha);
    if (!data) {
      res.writeHead(404).end();
      return;
    }
    const m = /bytes=(\d+)-(\d*)/.exec(req.headers.range ?? '');
    const start = m ? Number(m[1]) : 0;
    const end = m?.[2] ? Math.min(Number(m[2]), data.length - 1) : data.length - 1;
    const st = stats.get(sha) ?? { requests: 0, bytes: 0 };
    st.requests++;
    st.bytes += end - start + 1;
    stats.set(sha, st);
    res.writeHead(m ? 206 : 200, { 'content-length': end - start + 1 });
    res.end(data.subarray(start, end + 1));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanup.push(() => new Promise<void>((r) => server.close(() => r())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, stats };
}

function setup(
  url: string,
  accept: Record<string, { dir: string; maxBytes?: number }>,
  chunkBytes = 1 << 20,
) {
  const dir = mkdtempSync(join(tmpdir(), 'agent-publications-'));
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  const open = () => {
    const db = new Database(join(dir, 'agent.sqlite'));
    const reported: Record<string, DocPublicationState>[] = [];
    const receiver = new PublicationReceiver({
      ledger: new SqlitePublicationLedger(db),
      files: new FsPublicationFiles(join(dir, 'partial')),
      source: new HttpBlobSource([{ url, token: 't' }]),
      policy: {
        accept: Object.fromEntries(
          Object.entries(accept).map(([k, v]) => [k, { ...v, dir: join(dir, v.dir) }]),
        ),
        quotaBytes: 1 << 30,
      },
      chunkBytes,
      now: () => 1,
      onStates: (s) => reported.push(s),
      log: { info: () => {}, warn: () => {} },
    });
    return { db, receiver, reported };
  };
  return { dir, open };
}

const manifest = (data: Buffer, over: Partial<BlobManifest> = {}): BlobManifest => ({
  sha256: createHash('sha256').update(data).digest('hex') as BlobManifest['sha256'],
  size: data.length,
  contentType: 'application/octet-stream',
  name: 'mirror.tar',
  fileKind: 'provider-mirror',
  bundleId: '01JW0000000000000000000001',
  ...over,
});

async function drive(r: PublicationReceiver, maxSteps: number) {
  for (let i = 0; i < maxSteps; i++) await r.step();
}

describe('publications at the site', () => {
  it('downloads across drops and a restart, byte-identical, within 1.05 x size, placed atomically', async () => {
    const data = randomBytes(24 * 1024 * 1024);
    const srv = await blobServer(data, 3 * 1024 * 1024 + 12_345);
    // 8 MiB Range requests over a connection cut every ~3 MiB: most requests end in a drop.
    const s = setup(srv.url, { 'provider-mirror': { dir: 'mirror' } }, 8 << 20);
    let a = s.open();
    a.receiver.announce(manifest(data));
    await drive(a.receiver, 10);
    a.db.close(); // restart in the middle
    a = s.open();
    await drive(a.receiver, 200);
    const placed = join(s.dir, 'mirror', 'mirror.tar');
    expect(readFileSync(placed).equals(data)).toBe(true);
    expect(srv.stats.bytes / data.length).toBeLessThanOrEqual(1.05);
    expect(srv.stats.requests).toBeGreaterThanOrEqual(8); // it really was cut and resumed
    expect(readdirSync(join(s.dir, 'mirror'))).toEqual(['mirror.tar']);
    expect(a.receiver.states()['01JW0000000000000000000001']).toMatchObject({
      state: 'placed',
      bytes: data.length,
    });
    a.db.close();
  });

  it('refuses a blob whose bytes do not match the signed sha256, and places nothing', async () => {
    const data = randomBytes(200_000);
    // One byte flipped (not replaced by a fixed one: a random byte is that one once in 256 runs).
    const tampered = Buffer.from(data);
    tampered[100] = (tampered[100] as number) ^ 0xff;
    const srv = await blobServer(tampered);
    const s = setup(srv.url, { module: { dir: 'mods' } });
    const a = s.open();
    a.receiver.announce(manifest(data, { fileKind: 'module' }));
    await drive(a.receiver, 5);
    expect(a.receiver.states()['01JW0000000000000000000001']).toMatchObject({ state: 'refused' });
    expect(existsSync(join(s.dir, 'mods', 'mirror.tar'))).toBe(false);
    a.db.close();
  });

  it('takes a small publication from its manifest with no fetch, verified by its sha256 before it is placed', async () => {
    const data = randomBytes(600);
    const srv = await blobServer(data);
    const s = setup(srv.url, { module: { dir: 'mods' } });
    const a = s.open();
    a.receiver.announce(manifest(data, { fileKind: 'module', inline: data }));
    await drive(a.receiver, 3);
    expect(readFileSync(join(s.dir, 'mods', 'mirror.tar')).equals(data)).toBe(true);
    expect(a.receiver.states()['01JW0000000000000000000001']).toMatchObject({ state: 'placed', bytes: 600 });
    expect(srv.stats.requests).toBe(0);
    a.db.close();
  });

  it('refuses inline bytes that do not hash to the signed sha256, fetching nothing and placing nothing', async () => {
    const data = randomBytes(600);
    const lying = Buffer.from(data);
    lying[7] = (lying[7] as number) ^ 0xff;
    const srv = await blobServer(data);
    const s = setup(srv.url, { module: { dir: 'mods' } });
    const a = s.open();
    a.receiver.announce(manifest(data, { fileKind: 'module', inline: lying }));
    await drive(a.receiver, 3);
    const st = a.receiver.states()['01JW0000000000000000000001'];
    expect(st).toMatchObject({ state: 'refused' });
    expect(st?.reason).toMatch(/not the signed sha256/);
    expect(existsSync(join(s.dir, 'mods', 'mirror.tar'))).toBe(false);
    expect(srv.stats.requests).toBe(0);
    // Inline bytes of another length than the signed size: refused on arrival.
    a.receiver.announce(
      manifest(data, {
        fileKind: 'module',
        inline: data.subarray(1),
        bundleId: '01JW0000000000000000000002',
      }),
    );
    expect(a.receiver.states()['01JW0000000000000000000002']?.reason).toMatch(/inline bytes are 599/);
    a.db.close();
  });

  it('fetches a publication by Range when its inline bytes were lost with a restart', async () => {
    const data = randomBytes(600);
    const srv = await blobServer(data);
    const s = setup(srv.url, { module: { dir: 'mods' } });
    let a = s.open();
    a.receiver.announce(manifest(data, { fileKind: 'module', inline: data }));
    a.db.close(); // before any step: the inline bytes were in memory only
    a = s.open();
    await drive(a.receiver, 3);
    expect(readFileSync(join(s.dir, 'mods', 'mirror.tar')).equals(data)).toBe(true);
    expect(srv.stats.requests).toBe(1);
    a.db.close();
  });

  it('refuses and reports a kind the local config does not accept, without fetching it', async () => {
    const data = randomBytes(1000);
    const srv = await blobServer(data);
    const s = setup(srv.url, { config: { dir: 'cfg' } });
    const a = s.open();
    a.receiver.announce(manifest(data, { fileKind: 'image' }));
    await drive(a.receiver, 3);
    const st = a.receiver.states()['01JW0000000000000000000001'];
    expect(st).toMatchObject({ state: 'refused' });
    expect(st?.reason).toMatch(/not accepted/);
    expect(a.reported.at(-1)?.['01JW0000000000000000000001']?.state).toBe('refused');
    expect(srv.stats.requests).toBe(0);
    a.db.close();
  });

  it('keeps a placed name inside the kind directory and never marks it executable', async () => {
    const data = Buffer.from('#!/bin/sh\necho hi\n');
    const srv = await blobServer(data);
    const s = setup(srv.url, { file: { dir: 'files' } });
    const a = s.open();
    a.receiver.announce(manifest(data, { fileKind: 'file', name: '../../etc/evil.sh' }));
    await drive(a.receiver, 3);
    const names = readdirSync(join(s.dir, 'files'));
    expect(names).toEqual(['_.._etc_evil.sh']);
    const { statSync } = await import('node:fs');
    expect(statSync(join(s.dir, 'files', names[0] as string)).mode & 0o111).toBe(0);
    a.db.close();
  });
});

describe('superseded publications at the site', () => {
  const MB = 1 << 20;
  const hash = (b: Buffer) => createHash('sha256').update(b).digest('hex');

  it('stops downloading a superseded publication, removes its partial file and places its successor at the same path', async () => {
    const v1 = randomBytes(3 * MB);
    const v2 = randomBytes(2 * MB);
    const srv = await blobsServer([v1, v2]);
    const s = setup(srv.url, { config: { dir: 'cfg' } });
    const a = s.open();
    a.receiver.announce(manifest(v1, { fileKind: 'config', name: 'site.tar', bundleId: 'b1' }));
    await a.receiver.step();
    expect(existsSync(join(s.dir, 'partial', hash(v1)))).toBe(true);

    a.receiver.announce(
      manifest(v2, { fileKind: 'config', name: 'site.tar', bundleId: 'b2', supersedes: ['b1'] }),
    );
    expect(a.receiver.states().b1).toMatchObject({ state: 'superseded', bytes: 0 });
    expect(a.reported.at(-1)?.b1?.state).toBe('superseded');
    await drive(a.receiver, 5);
    expect(existsSync(join(s.dir, 'partial', hash(v1)))).toBe(false);
    expect(srv.stats.get(hash(v1))?.requests).toBe(1);
    expect(readFileSync(join(s.dir, 'cfg', 'site.tar')).equals(v2)).toBe(true);
    expect(a.receiver.states()).toMatchObject({ b1: { state: 'superseded' }, b2: { state: 'placed' } });
    // What the ledger keeps for itself does not go into the document.
    expect(Object.keys(a.receiver.states().b2 ?? {})).not.toContain('supersedes');
    a.db.close();
  });

  it('leaves a placed file in place when its successor is placed under another name', async () => {
    const v1 = Buffer.from('one');
    const v2 = Buffer.from('two');
    const v3 = Buffer.from('three');
    const srv = await blobsServer([v1, v2, v3]);
    const s = setup(srv.url, { config: { dir: 'cfg' } });
    const a = s.open();
    a.receiver.announce(manifest(v1, { fileKind: 'config', name: 'a.conf', bundleId: 'b1' }));
    await drive(a.receiver, 2);
    a.receiver.announce(
      manifest(v2, { fileKind: 'config', name: 'b.conf', bundleId: 'b2', supersedes: ['b1'] }),
    );
    await drive(a.receiver, 2);
    expect(a.receiver.states().b1).toMatchObject({ state: 'superseded', bytes: 3 });
    expect(readFileSync(join(s.dir, 'cfg', 'a.conf'), 'utf8')).toBe('one');
    expect(readFileSync(join(s.dir, 'cfg', 'b.conf'), 'utf8')).toBe('two');
    a.receiver.announce(
      manifest(v3, { fileKind: 'config', name: 'b.conf', bundleId: 'b3', supersedes: ['b2'] }),
    );
    await drive(a.receiver, 2);
    expect(readFileSync(join(s.dir, 'cfg', 'b.conf'), 'utf8')).toBe('three');
    expect(readdirSync(join(s.dir, 'cfg')).sort()).toEqual(['a.conf', 'b.conf']);
    const states = Object.values(a.receiver.states()).map((x) => x.state);
    expect(states.filter((x) => x === 'superseded')).toHaveLength(2);
    a.db.close();
  });

  it('records a superseded publication announced late without fetching it, and keeps a partial its successor shares', async () => {
    const same = randomBytes(2 * MB);
    const srv = await blobsServer([same]);
    const s = setup(srv.url, { config: { dir: 'cfg' } });
    const a = s.open();
    a.receiver.announce(manifest(same, { fileKind: 'config', name: 'x', bundleId: 'b1' }));
    await a.receiver.step(); // 1 of 2 MiB
    // Republished with the same bytes: the partial file is the successor's resume offset.
    a.receiver.announce(
      manifest(same, { fileKind: 'config', name: 'x', bundleId: 'b2', supersedes: ['b0', 'b1'] }),
    );
    await drive(a.receiver, 3);
    expect(readFileSync(join(s.dir, 'cfg', 'x')).equals(same)).toBe(true);
    expect(srv.stats.get(hash(same))?.bytes).toBe(same.length);
    a.receiver.announce(manifest(same, { fileKind: 'config', name: 'x', bundleId: 'b0' }));
    await drive(a.receiver, 2);
    expect(a.receiver.states().b0).toMatchObject({ state: 'superseded' });
    expect(srv.stats.get(hash(same))?.requests).toBe(2);
    a.db.close();
  });

  it('does not place a publication superseded while its last chunk was in flight', async () => {
    const v1 = randomBytes(1000);
    const v2 = randomBytes(1000);
    const srv = await blobsServer([v1, v2]);
    const dir = mkdtempSync(join(tmpdir(), 'agent-publications-'));
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    const db = new Database(join(dir, 'agent.sqlite'));
    cleanup.push(() => {
      db.close();
    });
    const http = new HttpBlobSource([{ url: srv.url, token: 't' }]);
    let onFetched = () => {};
    const receiver = new PublicationReceiver({
      ledger: new SqlitePublicationLedger(db),
      files: new FsPublicationFiles(join(dir, 'partial')),
      source: {
        fetchInto: async (...args) => {
          const r = await http.fetchInto(...args);
          onFetched();
          return r;
        },
      },
      policy: { accept: { config: { dir: join(dir, 'cfg') } }, quotaBytes: 1 << 30 },
      now: () => 1,
      onStates: () => {},
      log: { info: () => {}, warn: () => {} },
    });
    receiver.announce(manifest(v1, { fileKind: 'config', name: 'one', bundleId: 'b1' }));
    onFetched = () => {
      onFetched = () => {};
      receiver.announce(
        manifest(v2, { fileKind: 'config', name: 'two', bundleId: 'b2', supersedes: ['b1'] }),
      );
    };
    await drive(receiver, 4);
    expect(existsSync(join(dir, 'cfg', 'one'))).toBe(false);
    expect(existsSync(join(dir, 'partial', hash(v1)))).toBe(false);
    expect(readFileSync(join(dir, 'cfg', 'two')).equals(v2)).toBe(true);
    expect(receiver.states().b1).toMatchObject({ state: 'superseded' });
  });
});

describe('publication manifests from the downlink', () => {
  it('announces only manifests signed by the pinned hub key; a forged or altered one (inline file included) is refused', async () => {
    const agentKeys = await generateSigningKeyPair();
    const hub = await TestHub.start(agentKeys.publicKey);
    cleanup.push(() => hub.close());
    const dir = mkdtempSync(join(tmpdir(), 'agent-manifests-'));
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    const { ledger: store, db } = openSqliteLedger({
      path: join(dir, 'agent.sqlite'),
      site: 'ship-7',
      agent: 'a1',
    });
    cleanup.push(() => store.close());
    const announced: BlobManifest[] = [];
    const warnings: string[] = [];
    const engine = new SyncEngine({
      site: 'ship-7',
      agent: 'a1',
      store,
      uplinks: [new HttpUplink({ url: hub.url, token: 'agent-token', urlStorage: new SqliteUrlStorage(db) })],
      privateKey: agentKeys.privateKey,
      hubPublicKey: hub.keys.publicKey,
      allowsCell: () => false,
      onPlanRequest: () => {},
      newBundleId: monotonicUlid(Date.now, cryptoRandomBytes),
      now: Date.now,
      log: { info: () => {}, warn: (_o, m) => warnings.push(m) },
      onBlobManifest: (m) => announced.push(m),
    });
    let seq = 0;
    const signed = (m: BlobManifest, key: CryptoKey) => {
      const header = {
        id: `01JW${String(++seq).padStart(22, '0')}`,
        kind: 'blob',
        source: 'hub',
        destination: { site: 'ship-7' },
        created: Date.now(),
        lifetimeS: 3600,
        priority: 'bulk',
      } as unknown as BundleHeader & { kind: 'blob' };
      return encodeBundle(header, m, key);
    };
    const data = randomBytes(1000);
    const forger = await generateSigningKeyPair();
    hub.backend.enqueueDownlink(
      'ship-7',
      await signed(manifest(data, { bundleId: 'forged' }), forger.privateKey),
    );
    // A genuine manifest whose signed bytes were changed on the way (another name).
    const altered = Buffer.from(await signed(manifest(data, { bundleId: 'altered' }), hub.keys.privateKey));
    const at = altered.indexOf('mirror.tar');
    expect(at).toBeGreaterThan(0);
    altered.write('mirrorXtar', at);
    hub.backend.enqueueDownlink('ship-7', altered);
    // A genuine manifest carrying its file inline (decision 360), one byte of the file flipped on the way.
    const small = Buffer.from('# v2 git bundle\n'.repeat(20));
    const carried = Buffer.from(
      await signed(manifest(small, { bundleId: 'inline-altered', inline: small }), hub.keys.privateKey),
    );
    const inFile = carried.indexOf(small);
    expect(inFile).toBeGreaterThan(0);
    carried[inFile + 5] = (carried[inFile + 5] as number) ^ 0xff;
    hub.backend.enqueueDownlink('ship-7', carried);
    hub.backend.enqueueDownlink(
      'ship-7',
      await signed(manifest(data, { bundleId: 'genuine' }), hub.keys.privateKey),
    );

    const r = await engine.pullOnce();
    expect(r.refused).toBe(3);
    expect(announced.map((m) => m.bundleId)).toEqual(['genuine']);
    expect(warnings.filter((w) => w.includes('not signed by the pinned hub key'))).toHaveLength(3);
  });
});
