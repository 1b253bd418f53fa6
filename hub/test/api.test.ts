import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  BATCH_CONTENT_TYPE,
  decodeBatch,
  decodeBundle,
  decodePayload,
  encodeBatch,
  MatrixResponseSchema,
  PlanRequestSchema,
  publicKeyFromText,
  SiteDetailSchema,
  verifyBundle,
} from '@driftline/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { sha256Hex } from '../src/adapters/hop/HubHopBackend.js';
import { MemoryWebhookSender } from '../src/adapters/memory/MemoryWebhookSender.js';
import { createHub, type Hub } from '../src/app.js';
import { parseConfig } from '../src/config.js';
import { enrol } from '../src/core/enrolment.js';
import { AgentSim, TestClock } from './agentSim.js';
import { addTestUser } from './users.js';

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0)) await f();
});

async function startHub(extra: object = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'hub-api-'));
  const cfg = parseConfig(
    { dataDir: dir, uiDir: join(dir, 'no-ui'), planRequestTtlS: 600, ...extra },
    dir,
    {},
  );
  if (!cfg.ok) throw new Error(cfg.errors.join('; '));
  const clock = new TestClock();
  const sender = new MemoryWebhookSender();
  const hub: Hub = await createHub(cfg.config, { clock, sender });
  const { url } = await hub.hop.listen(0, '127.0.0.1');
  await hub.store.commit({
    peers: [{ tokenSha256: sha256Hex('relay-token'), name: 'relay-1', sites: ['*'] }],
  });
  cleanup.push(async () => {
    await hub.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const agent = await AgentSim.create('ship-7', 'a1', clock);
  const r = await enrol(
    hub.store,
    { site: 'ship-7', agent: 'a1', key: await agent.publicKeyText() },
    clock.now(),
  );
  if (!r.ok) throw new Error(r.error);
  const auth = { authorization: 'Bearer relay-token' };
  const admin = { authorization: (await addTestUser(hub.store, 'test-admin', ['admin'])).authorization };
  const push = async () => {
    const res = await fetch(`${url}/v1/bundles`, {
      method: 'POST',
      headers: { ...auth, 'content-type': BATCH_CONTENT_TYPE },
      body: encodeBatch([await agent.delta()]) as Uint8Array<ArrayBuffer>,
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as { receipts: { status: string }[] }).receipts;
  };
  const get = async (path: string) => {
    const res = await fetch(`${url}${path}`, { headers: admin });
    return { status: res.status, body: (await res.json()) as never };
  };
  return { hub, url, clock, agent, push, get, sent: sender.sent, auth, admin };
}

describe('hub over HTTP', () => {
  it('serves the matrix now and as it was at an earlier time', async () => {
    const h = await startHub();
    h.agent.plan('prod', 'net', 'clean', { cadenceS: 600 });
    expect((await h.push()).map((r) => r.status)).toEqual(['stored']);
    const t1 = new Date(h.clock.now()).toISOString();
    h.clock.advance(60_000);
    h.agent.plan('prod', 'net', 'drift', { cadenceS: 600 });
    await h.push();

    const now = await h.get('/api/matrix');
    const cells = MatrixResponseSchema.parse(now.body).cells;
    expect(cells).toHaveLength(1);
    expect(cells[0]).toMatchObject({
      site: 'ship-7',
      environment: 'prod',
      component: 'net',
      status: 'drift',
      expectedIntervalS: 600,
      stale: false,
      siteUnreachable: false,
    });
    const then = MatrixResponseSchema.parse((await h.get(`/api/matrix?at=${encodeURIComponent(t1)}`)).body);
    expect(then.cells.map((c) => c.status)).toEqual(['clean']);
    expect((await h.get('/api/matrix?status=clean')).body).toMatchObject({ cells: [] });
    expect((await h.get('/api/matrix?at=yesterday')).status).toBe(400);

    h.clock.advance(1_300_000); // past 2 × 600 s
    const stale = MatrixResponseSchema.parse((await h.get('/api/matrix?stale=true')).body);
    expect(stale.cells).toHaveLength(1);
    const site = SiteDetailSchema.parse((await h.get('/api/sites/ship-7')).body);
    expect(site.agents[0]).toMatchObject({ agent: 'a1', version: '0.1.0' });
    expect((await h.get('/api/sites/nowhere')).status).toBe(404);
    const runs = (await h.get('/api/cells/ship-7/prod/net/runs')).body as { runs: { status: string }[] };
    expect(runs.runs.map((r) => r.status)).toEqual(['drift', 'clean']);
    const clean = (await h.get('/api/cells/ship-7/prod/net/runs?status=clean')).body as typeof runs;
    expect(clean.runs.map((r) => r.status)).toEqual(['clean']);
    expect((await h.get('/api/cells/ship-7/prod/net/runs?status=green')).status).toBe(400);
    expect(((await h.get('/api/openapi.json')).body as { openapi: string }).openapi).toBe('3.1.0');
  });

  it('takes plan requests through pending, delivered and done, and expires the unanswered', async () => {
    const h = await startHub();
    h.agent.plan('prod', 'net');
    await h.push();
    const post = (body: object) =>
      fetch(`${h.url}/api/plan-requests`, {
        method: 'POST',
        headers: { ...h.admin, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    expect((await post({ site: 'nowhere', environment: 'prod', component: 'net' })).status).toBe(404);
    expect((await post({ site: 'ship-7', environment: 'prod', component: 'nope' })).status).toBe(422);
    const created = PlanRequestSchema.parse(
      await (await post({ site: 'ship-7', environment: 'prod', component: 'net' })).json(),
    );
    expect(created.state).toBe('pending');

    const dl = await fetch(`${h.url}/v1/bundles?for=ship-7`, { headers: h.auth });
    const batch = decodeBatch(new Uint8Array(await dl.arrayBuffer()));
    if (!batch.ok) throw batch.error;
    const control = batch.value
      .map((b) => decodeBundle(b))
      .find((b) => b.ok && b.value.header.kind === 'control');
    if (!control?.ok) throw new Error('no control bundle on the downlink');
    expect(await verifyBundle(control.value, await publicKeyFromText(h.hub.publicKeyText))).toBe(true);
    const payload = decodePayload('control', control.value.payload);
    expect(payload.ok && payload.value.type === 'plan-request' && payload.value.requestId).toBe(
      created.requestId,
    );
    expect(((await h.get(`/api/plan-requests/${created.requestId}`)).body as { state: string }).state).toBe(
      'delivered',
    );

    h.clock.advance(2_000);
    const runId = h.agent.plan('prod', 'net', 'changes');
    await h.push();
    expect((await h.get(`/api/plan-requests/${created.requestId}`)).body).toMatchObject({
      state: 'done',
      runId,
    });

    const late = PlanRequestSchema.parse(
      await (await post({ site: 'ship-7', environment: 'prod', component: 'net' })).json(),
    );
    h.clock.advance(601_000);
    await h.hub.sweeper.sweep();
    expect((await h.get(`/api/plan-requests/${late.requestId}`)).body).toMatchObject({ state: 'expired' });
    // the list is newest first and capped: closed requests stay for good
    const list = (q: string) =>
      h.get(`/api/plan-requests${q}`).then((r) => ({
        status: r.status,
        ids: (r.body as { requests?: Array<{ requestId: string }> }).requests?.map((x) => x.requestId),
      }));
    expect(await list('')).toEqual({ status: 200, ids: [late.requestId, created.requestId] });
    expect(await list('?limit=1&site=ship-7')).toEqual({ status: 200, ids: [late.requestId] });
    expect((await list('?limit=501')).status).toBe(400);
  });

  it('marks a plan request done when the plan came out unchanged (a confirmation, no new run)', async () => {
    const h = await startHub();
    const first = h.agent.plan('prod', 'net');
    await h.push();
    const res = await fetch(`${h.url}/api/plan-requests`, {
      method: 'POST',
      headers: { ...h.admin, 'content-type': 'application/json' },
      body: JSON.stringify({ site: 'ship-7', environment: 'prod', component: 'net' }),
    });
    const created = PlanRequestSchema.parse(await res.json());
    h.clock.advance(2_000);
    h.agent.confirm('prod', 'net');
    await h.push();
    expect((await h.get(`/api/plan-requests/${created.requestId}`)).body).toMatchObject({
      state: 'done',
      runId: first,
    });
  });

  it('notifies a webhook once per transition', async () => {
    const h = await startHub({ webhooks: { urls: ['http://127.0.0.1:9/hook'], secret: 'x'.repeat(16) } });
    h.agent.plan('prod', 'net', 'drift', { cadenceS: 60 });
    await h.push();
    await h.push(); // the same facts again: no new transition
    await h.hub.drift.settled();
    await h.hub.sweeper.deliverWebhooks();
    // The cell's transition, and the drift episode it opened (decision 421): each once.
    expect(h.sent.map((s) => s.event).sort()).toEqual(['drift.opened', 'new-drift']);
    h.agent.plan('prod', 'net', 'drift', { cadenceS: 60 }); // still drifting: not a new transition
    await h.push();
    h.clock.advance(121_000);
    await h.hub.sweeper.sweep();
    await h.hub.sweeper.sweep();
    await h.hub.sweeper.deliverWebhooks();
    await h.hub.sweeper.deliverWebhooks();
    expect(h.sent.map((s) => s.event).filter((e) => e !== 'drift.opened')).toEqual([
      'new-drift',
      'cell-stale',
    ]);
    expect(h.sent.filter((s) => s.event === 'drift.opened')).toHaveLength(1);
    expect(JSON.parse(h.sent.find((s) => s.event === 'new-drift')!.body)).toMatchObject({
      event: 'new-drift',
      site: 'ship-7',
      component: 'net',
    });
  });

  it('replays missed events after Last-Event-ID', async () => {
    const h = await startHub();
    h.agent.plan('prod', 'net');
    await h.push();
    const ctrl = new AbortController();
    const res = await fetch(`${h.url}/api/events`, {
      headers: { ...h.admin, 'last-event-id': `${h.hub.events.epoch}-0` },
      signal: ctrl.signal,
    });
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const reader = res.body!.getReader();
    let text = '';
    for (
      let i = 0;
      i < 20 && !(text.includes('event: run-added') && text.includes('event: cell-updated'));
      i++
    ) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    ctrl.abort();
    expect(text).toContain(`id: ${h.hub.events.epoch}-1\nevent: run-added\n`);
    expect(text).toContain('event: cell-updated');
  });

  it('answers / with a short page when the UI is not built', async () => {
    const h = await startHub();
    const res = await fetch(`${h.url}/`);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('Driftline hub');
  });
});
