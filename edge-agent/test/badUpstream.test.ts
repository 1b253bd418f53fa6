import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { cryptoRandomBytes, generateSigningKeyPair, monotonicUlid } from '@driftline/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpUplink } from '../src/adapters/http/HttpUplink.js';
import { openSqliteLedger } from '../src/adapters/sqlite/openSqliteLedger.js';
import { SqliteUrlStorage } from '../src/adapters/tus/SqliteUrlStorage.js';
import { SyncEngine } from '../src/core/sync/SyncEngine.js';
import { runId, summary, tempDir } from './helpers/storeFixtures.js';

const servers: Server[] = [];
afterEach(() => {
  for (const s of servers.splice(0)) s.close();
});

/** An upstream whose health check passes but whose bundle endpoint answers `status` with `body`. */
async function badUpstream(status: number, body: string): Promise<string> {
  const s = createServer((req, res) => {
    if (req.url === '/v1/health') {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
      return;
    }
    req.resume();
    res.writeHead(status, { 'content-type': 'text/plain' }).end(body);
  });
  servers.push(s);
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const a = s.address() as { port: number };
  return `http://127.0.0.1:${a.port}`;
}

async function engineFor(url: string, { ledger: store, db }: ReturnType<typeof openSqliteLedger>) {
  const keys = await generateSigningKeyPair();
  return new SyncEngine({
    site: 'ship-7',
    agent: 'a1',
    store,
    uplinks: [new HttpUplink({ url, token: 't', urlStorage: new SqliteUrlStorage(db) })],
    privateKey: keys.privateKey,
    hubPublicKey: keys.publicKey,
    allowsCell: () => true,
    onPlanRequest: () => {},
    newBundleId: monotonicUlid(Date.now, cryptoRandomBytes),
    now: Date.now,
    log: { info: () => {}, warn: () => {} },
  });
}

describe('bad upstreams and a full disk', () => {
  for (const [status, body, expected] of [
    [503, 'upstream is down for maintenance', /HTTP 503/],
    [200, '<html>captive portal</html>', /not a receipt list/],
    [500, '{"error":{"code":"internal","message":"boom"}}', /HTTP 500 internal: boom/],
  ] as const) {
    it(`keeps everything and says why when the upstream answers ${status} ${body.slice(0, 20)}`, async () => {
      const opened = openSqliteLedger({ path: join(tempDir(), 'a.sqlite'), site: 'ship-7', agent: 'a1' });
      const store = opened.ledger;
      store.record({ runId: runId(), summary: summary() });
      const engine = await engineFor(await badUpstream(status, body), opened);
      const r = await engine.pushOnce();
      expect(r.kind).toBe('unreachable');
      const st = store.status();
      expect(st.lastPush?.ok).toBe(false);
      expect(st.lastPush?.detail).toMatch(expected);
      expect(st.unackedRuns).toBe(1);
      expect(store.pending()).toHaveLength(1); // still owed, will be re-sent
      store.close();
    });
  }

  it('refuses a run on a full disk with nothing half-written, and carries on when space returns', () => {
    const { ledger: store, db } = openSqliteLedger({
      path: join(tempDir(), 'a.sqlite'),
      site: 'ship-7',
      agent: 'a1',
    });
    store.record({ runId: runId(), summary: summary({ component: 'kept' }) });
    const pages = db.pragma('page_count', { simple: true }) as number;
    db.pragma(`max_page_count = ${pages + 1}`); // the disk is full now
    const big = { sha256: 'f'.repeat(64), bytes: new Uint8Array(64 * 1024).fill(7), contentType: 'x' };
    expect(() =>
      store.record({ runId: runId(), summary: summary({ component: 'lost' }), detail: big }),
    ).toThrow(/full/);
    expect(store.status().unackedRuns).toBe(1);
    expect(store.pending()).toHaveLength(1);
    db.pragma('max_page_count = 1073741823'); // space returns
    store.record({ runId: runId(), summary: summary({ component: 'after' }) });
    expect(store.status().unackedRuns).toBe(2);
    store.close();
  });

  it('says the last push FAILED only until an upstream answers again (then the push an upstream took)', () => {
    let now = 1_000_000;
    const opened = openSqliteLedger({
      path: join(tempDir(), 'a.sqlite'),
      site: 'ship-7',
      agent: 'a1',
      now: () => now,
    });
    const store = opened.ledger;
    const [relay, hub] = ['http://relay-1:7000', 'http://hub:8443'];
    store.recordPush({
      bundleId: runId(),
      epoch: 1,
      heads: [],
      bytes: 500,
      upstream: relay,
      receipt: 'stored',
      blobs: [],
    });
    now += 1000;
    store.recordPushFailure(relay, 'ECONNREFUSED');
    expect(store.status().lastPush).toMatchObject({ ok: false, upstream: relay, detail: 'ECONNREFUSED' });
    // the relay back (its pull answered): the last push is the one it took, not the failure before
    now += 1000;
    store.recordPullResult(relay, null);
    expect(store.status().lastPush).toMatchObject({ ok: true, upstream: relay, at: 1_000_000 });
    // a failure of the relay while the hub answers: in contact through the hub
    now += 1000;
    store.recordPushFailure(relay, 'stalled');
    expect(store.status().lastPush?.ok).toBe(false);
    now += 1000;
    store.recordPullResult(hub, null);
    expect(store.status().lastPush).toMatchObject({ ok: true, upstream: relay });
    store.close();
  });
});
