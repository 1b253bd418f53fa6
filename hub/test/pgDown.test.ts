import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BATCH_CONTENT_TYPE, encodeBatch } from '@driftline/protocol';
import { until as untilReached } from '@driftline/protocol/testing';
import pino from 'pino';
import { expect, it, onTestFailed, vi } from 'vitest';
import { sha256Hex } from '../src/adapters/http/credentials.js';
import { createHub } from '../src/app.js';
import { parseConfig } from '../src/config.js';
import { enrol } from '../src/core/enrolment.js';
import { AgentSim, TestClock } from './agentSim.js';
import { describePg, type PgServer } from './postgres.js';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 180_000 });

const RELAY = { authorization: 'Bearer relay-token' };

/** A real hub on port 0 whose store is the database at `url` (reachable or not); its hop URL and logs. */
async function startPgHub(server: PgServer, url: string) {
  const dir = mkdtempSync(join(tmpdir(), 'hub-pg-'));
  const cfg = parseConfig(
    {
      dataDir: dir,
      uiDir: join(dir, 'no-ui'),
      listen: { host: '127.0.0.1', port: 0 },
      store: { kind: 'postgres', url, passwordFile: join(server.dir, 'pw') },
    },
    dir,
    {},
  );
  if (!cfg.ok) throw new Error(cfg.errors.join('; '));
  const logs: string[] = [];
  const logger = pino({ level: 'warn' }, { write: (l: string) => logs.push(l) });
  const clock = new TestClock();
  const hub = await createHub(cfg.config, { clock, logger });
  const { hop } = await hub.listen();
  const post = async (batch: Uint8Array) => {
    const r = await fetch(`${hop}/v1/bundles`, {
      method: 'POST',
      headers: { ...RELAY, 'content-type': BATCH_CONTENT_TYPE },
      body: batch as Uint8Array<ArrayBuffer>,
    });
    return { status: r.status, retryAfter: r.headers.get('retry-after'), body: await r.json() };
  };
  const setUp = async (site: string) => {
    await hub.store.commit({
      peers: [{ tokenSha256: sha256Hex('relay-token'), name: 'relay-1', sites: ['*'] }],
    });
    const agent = await AgentSim.create(site, 'a1', clock);
    const e = await enrol(hub.store, { site, agent: 'a1', key: await agent.publicKeyText() }, clock.now());
    if (!e.ok) throw new Error(e.error);
    return agent;
  };
  return {
    hub,
    hop,
    logs,
    post,
    setUp,
    close: async () => {
      await hub.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Names the step a failed (or hung: vitest's timeout) test had reached, with the tail of the cluster's log,
 * so that a failure in a whole run says where it stood.
 */
function steps(server: () => PgServer) {
  let at = 'start';
  onTestFailed(() => {
    let log = '';
    try {
      log = readFileSync(join(server().dir, 'log'), 'utf8').slice(-1500);
    } catch {}
    console.error(`pgDown: the test stood at "${at}"; the cluster's log ends:\n${log}`);
  });
  return (step: string) => {
    at = step;
  };
}

/**
 * `GET /v1/health` once it answers `status`: asked every 50 ms, at most 1,000 times, then it throws naming the
 * status never seen (and the last one that was), never hands on another status as the answer.
 */
async function healthWhen(
  hop: string,
  status: number,
): Promise<{ status: number; body: Record<string, unknown> }> {
  let last = { status: 0, body: {} as Record<string, unknown> };
  await untilReached(
    async () => {
      const r = await fetch(`${hop}/v1/health`);
      last = { status: r.status, body: (await r.json()) as Record<string, unknown> };
      return last.status === status;
    },
    () =>
      `GET /v1/health answering ${status} (the last answer was ${last.status}: ${JSON.stringify(last.body)})`,
    { everyMs: 50 },
  );
  return last;
}

describePg('hub on PostgreSQL while the database goes down', (server) => {
  it('answers 503 store-unavailable while it is down mid-run, then 200 when it is back, losing nothing receipted', async () => {
    const step = steps(server);
    const url = await server().createDatabase();
    const h = await startPgHub(server(), url);
    try {
      const agent = await h.setUp('ship-7');
      const first = agent.plan('prod', 'net', 'clean');
      const before = await h.post(encodeBatch([await agent.delta()]));
      expect(before.status).toBe(200);
      expect(before.body.receipts.map((r: { status: string }) => r.status)).toEqual(['stored']);

      step('stopping the cluster');
      await server().stop();
      step('posting while it is down');
      const second = agent.plan('prod', 'net', 'drift');
      const batch = encodeBatch([await agent.delta()]);
      const down = await h.post(batch);
      expect(down.status).toBe(503);
      expect(down.body.error.code).toBe('store-unavailable');
      expect(down.body.error.message).toMatch(/PostgreSQL at 127\.0\.0\.1:\d+\/\w+ is unavailable/);
      expect(Number(down.retryAfter)).toBeGreaterThan(0);
      // The downlink a relay pulls says the same.
      const pull = await fetch(`${h.hop}/v1/bundles?for=ship-7`, { headers: RELAY });
      expect(pull.status).toBe(503);
      // A load balancer's health check sees it too, and why (the check is asked at most once a second).
      step('waiting for health 503');
      const sick = await healthWhen(h.hop, 503);
      expect(sick.body).toMatchObject({ ok: false, role: 'hub' });
      // A fixed phrase: the health check answers anyone, the database's own text goes to the log only.
      expect(sick.body.detail).toBe('the store is unavailable');

      step('starting the cluster again');
      await server().start();
      step('waiting for health 200');
      expect((await healthWhen(h.hop, 200)).body).toMatchObject({ ok: true });
      // The relay kept custody of the batch and sends it again: stored now, once.
      step('posting the batch again');
      const after = await h.post(batch);
      expect(after.status).toBe(200);
      expect(after.body.receipts.map((r: { status: string }) => r.status)).toEqual(['stored']);
      expect(await h.hub.store.getRun(first)).toMatchObject({ status: 'clean' });
      expect(await h.hub.store.getRun(second)).toMatchObject({ status: 'drift' });
      expect((await h.hub.store.getCell('ship-7', 'prod', 'net'))?.runId).toBe(second);
      expect((await h.post(batch)).body.receipts.map((r: { status: string }) => r.status)).toEqual([
        'duplicate',
      ]);
    } finally {
      await server()
        .start()
        .catch(() => {}); // already running unless an assertion failed while it was down
      await h.close();
    }
  });

  it('starts while the database is down, answers 503, and migrates and serves once it is up', async () => {
    const url = await server().createDatabase();
    await server().stop();
    let h: Awaited<ReturnType<typeof startPgHub>> | undefined;
    try {
      h = await startPgHub(server(), url);
      expect(h.logs.join('\n')).toMatch(/the store is unreachable; answering 503 until it is back/);
      const agent = await AgentSim.create('ship-9', 'a1', new TestClock());
      agent.plan('prod', 'net', 'clean');
      const down = await h.post(encodeBatch([await agent.delta()]));
      expect(down.status).toBe(503);
      expect(down.body.error.code).toBe('store-unavailable');

      await server().start();
      const site = await h.setUp('ship-9');
      const runId = site.plan('prod', 'net', 'clean');
      const up = await h.post(encodeBatch([await site.delta()]));
      expect(up.status).toBe(200);
      expect(await h.hub.store.getRun(runId)).toMatchObject({ site: 'ship-9' });
    } finally {
      await server()
        .start()
        .catch(() => {});
      await h?.close();
    }
  });
});
