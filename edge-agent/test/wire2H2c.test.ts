import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer, request } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHopServer } from '@driftline/hop';
import { MemoryWire2Node, startFirstBytesTap } from '@driftline/hop/testing';
import {
  cryptoRandomBytes,
  generateSigningKeyPair,
  monotonicUlid,
  publicKeyToText,
} from '@driftline/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpUplink } from '../src/adapters/http/HttpUplink.js';
import { readWire2Links, Wire2State } from '../src/adapters/http/wire2State.js';
import { openSqliteLedger } from '../src/adapters/sqlite/openSqliteLedger.js';
import { SqliteUrlStorage } from '../src/adapters/tus/SqliteUrlStorage.js';
import { renderStatus } from '../src/commands/status.js';
import { SyncEngine } from '../src/core/sync/SyncEngine.js';
import { runId, summary, tempDir } from './helpers/storeFixtures.js';

/**
 * An agent on hop v2 carries its exchanges on h2c where its upstream states it (issue 46), and on
 * HTTP/1.1 where something on the way speaks only HTTP/1.1 (a proxy answers the HTTP/2 preface with an
 * HTTP/1.1 error): the exchange goes again on HTTP/1.1 and `edge-agent status` says why.
 */
const TOKEN = 'agent-token';
const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

/** A relay's place: a memory node that speaks v2 (and h2c), on 127.0.0.1 port 0. */
async function relay() {
  const node = new MemoryWire2Node({ name: 'relay-1', role: 'relay', maxHoldS: 3600 });
  node.addToken(TOKEN, { name: 'ship-7', sites: ['ship-7'] });
  const hop = createHopServer(node, { uploads: { directory: mkdtempSync(join(tmpdir(), 'agent-h2c-')) } });
  const { port } = await hop.listen();
  cleanup.push(() => hop.close());
  return { node, port };
}

/** An HTTP/1.1 reverse proxy in front of `port` (as an nginx without h2c): each request forwarded. */
async function http1Proxy(port: number) {
  const server = createServer((req, res) => {
    const up = request(
      { host: '127.0.0.1', port, method: req.method, path: req.url, headers: req.headers },
      (ur) => {
        res.writeHead(ur.statusCode ?? 502, ur.headers);
        ur.pipe(res);
      },
    );
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  const refused = new Set<Socket>();
  // Node's HTTP/1.1 parser takes the preface for a malformed request (once or more a connection): 400, closed
  server.on('clientError', (_e, socket: Socket) => {
    refused.add(socket);
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanup.push(
    () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  );
  return { port: (server.address() as AddressInfo).port, refused: () => refused.size };
}

async function agent(url: string, h2c?: boolean) {
  const keys = await generateSigningKeyPair();
  const dir = tempDir();
  const { ledger: store, db } = openSqliteLedger({
    path: join(dir, 'agent.sqlite'),
    site: 'ship-7',
    agent: 'a1',
  });
  cleanup.push(() => store.close());
  const statePath = join(dir, 'wire2-state.json');
  const state = new Wire2State(statePath);
  const uplink = new HttpUplink({
    url,
    token: TOKEN,
    urlStorage: new SqliteUrlStorage(db),
    ...(h2c === undefined ? {} : { h2c }),
    wire2: {
      site: 'ship-7',
      agent: 'a1',
      privateKey: keys.privateKey,
      publicKey: await publicKeyToText(keys.publicKey),
      state,
    },
  });
  const engine = new SyncEngine({
    site: 'ship-7',
    agent: 'a1',
    store,
    uplinks: [uplink],
    wire2: state,
    privateKey: keys.privateKey,
    hubPublicKey: keys.publicKey,
    allowsCell: () => true,
    onPlanRequest: () => {},
    newBundleId: monotonicUlid(Date.now, cryptoRandomBytes),
    now: Date.now,
    log: { info: () => {}, warn: () => {} },
  });
  const round = async (component: string) => {
    store.record({ runId: runId(), summary: summary({ component }) });
    expect((await engine.pushOnce()).kind).toBe('pushed');
    expect((await engine.pullOnce()).errors).toEqual([]);
  };
  const link = () => readWire2Links(statePath)[url];
  /** The pushes the state file holds: written once after each batch (docs/decisions/495-hop-v2-on-the-agent-link.md). */
  const savedPushes = () => (JSON.parse(readFileSync(statePath, 'utf8')) as { pushes: unknown[] }).pushes;
  const hopLine = () =>
    renderStatus(store.status(), readWire2Links(statePath))
      .split('\n')
      .find((l) => l.startsWith('hop'));
  return { round, link, hopLine, savedPushes };
}

describe('an agent on hop v2 and h2c', () => {
  it('carries its pushes and pulls on one h2c connection where the relay states it', async () => {
    const { node, port } = await relay();
    const tap = await startFirstBytesTap(port);
    cleanup.push(() => tap.close());
    const a = await agent(tap.url);
    await a.round('network');
    await a.round('dns');
    expect(node.pushes).toHaveLength(2);
    expect(a.savedPushes()).toHaveLength(2);
    // the registration (bearer token) on HTTP/1.1, every v2 exchange on the one h2c connection
    expect(tap.kinds).toEqual(['http/1.1', 'h2c']);
    expect(a.link()).toMatchObject({ wire: 2, carrier: 'h2c' });
    expect(a.hopLine()).toMatch(/^hop +v2 \(h2c\) with http:\/\/127\.0\.0\.1:\d+ \(node 3\)/);
  });

  it('falls back to HTTP/1.1 for that upstream behind a proxy that speaks only HTTP/1.1, and says so', async () => {
    const { node, port } = await relay();
    const proxy = await http1Proxy(port);
    const a = await agent(`http://127.0.0.1:${proxy.port}`);
    await a.round('network');
    await a.round('dns');
    // both pushes arrived: the first went again on HTTP/1.1 when its preface was refused
    expect(node.pushes).toHaveLength(2);
    expect(proxy.refused()).toBe(1); // h2c tried on one connection, not every exchange
    expect(a.link()).toMatchObject({ wire: 2, carrier: 'http/1.1' });
    expect(a.hopLine()).toMatch(/^hop +v2 \(HTTP\/1\.1: h2c is not spoken on the way/);
  });

  it('keeps HTTP/1.1 with sync.h2c: false', async () => {
    const { node, port } = await relay();
    const tap = await startFirstBytesTap(port);
    cleanup.push(() => tap.close());
    const a = await agent(tap.url, false);
    await a.round('network');
    expect(node.pushes).toHaveLength(1);
    expect(tap.kinds.every((k) => k === 'http/1.1')).toBe(true);
    expect(a.link()).toMatchObject({ wire: 2, carrier: 'http/1.1' });
    expect(a.hopLine()).toMatch(/^hop +v2 \(HTTP\/1\.1\) with/);
  });
});
