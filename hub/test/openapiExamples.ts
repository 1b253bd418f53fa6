import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { wire2Registration } from '@driftline/hop/testing';
import { BATCH_CONTENT_TYPE, encodeBatch, wire2 } from '@driftline/protocol';
import { API_ROUTES } from '../src/adapters/http/routes/index.js';
import { AgentSim } from './agentSim.js';
import { PLAN, type TestHub } from './hubFixture.js';
import { approvalExamples } from './openapiApprovalExamples.js';
import { driftExamples } from './openapiDriftExamples.js';
import type { Example } from './openapiExample.js';
import { addTestUser } from './users.js';

export type { Example } from './openapiExample.js';

const tus = { 'tus-resumable': '1.0.0' };
const b64 = (s: string) => Buffer.from(s).toString('base64');

/**
 * Requests that exercise every operation of the hub's OpenAPI document on `h` (a fixture hub with a
 * dashboard in `h.dir/no-ui`), with the status each must get: the success and the usual refusals. A
 * credential is added by the caller per operation (admin on the people's side, the relay's peer token
 * on `/v1`).
 */
export async function examples(h: TestHub): Promise<{ list: Example[]; admin: string; token: string }> {
  const admin = await addTestUser(h.hub.store, 'openapi-admin', ['admin']);
  const a = { authorization: admin.authorization };
  const ui = join(h.dir, 'no-ui');
  mkdirSync(join(ui, 'assets'), { recursive: true });
  writeFileSync(join(ui, 'index.html'), '<!doctype html><title>Driftline</title>');
  writeFileSync(join(ui, 'assets', 'app.js'), 'console.log("dashboard")');
  const jsonPost = (body: unknown): RequestInit => ({
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const made = await fetch(`${h.url}/api/plan-requests`, {
    ...jsonPost(PLAN),
    headers: { ...a, 'content-type': 'application/json' },
  });
  const requestId = ((await made.json()) as { requestId: string }).requestId;
  const pub = await fetch(`${h.url}/api/publications?site=ship-7&name=notes.txt`, {
    method: 'POST',
    headers: a,
    body: 'hello outpost',
  });
  const publicationId = ((await pub.json()) as { publicationId: string }).publicationId;
  const blob = 'blob bytes for the tus example';
  const sha = createHash('sha256').update(blob).digest('hex');
  const create = async () => {
    const r = await fetch(`${h.hopUrl}/v1/uploads`, {
      method: 'POST',
      headers: {
        ...h.relay,
        ...tus,
        'upload-length': String(blob.length),
        'upload-metadata': `sha256 ${b64(sha)}`,
      },
    });
    return (r.headers.get('location') ?? '').split('/').pop() as string;
  };
  const [up, doomed] = [await create(), await create()];
  // Signed by a key the hub has not enrolled: still a 200, with a refusing receipt.
  const stranger = await AgentSim.create('ship-7', 'a1', h.clock);
  stranger.plan('prod', 'net', 'drift');
  const batch = encodeBatch([await stranger.delta()]) as Uint8Array<ArrayBuffer>;
  const H = h.url;
  const V = h.hopUrl;
  // hop v2 (decision 495): the stranger's key is not the one enrolled; its message names no sender here
  const strangerRegistration = await wire2Registration(stranger.keys);
  const pull = (await wire2.encodeMessage(
    { kind: 'pull', from: 1, to: 0, seq: 1, body: { have: 0, holdS: 0 } },
    stranger.keys.privateKey,
  )) as Uint8Array<ArrayBuffer>;
  const commitId = (c: string) => c.repeat(40);
  await h.hub.store.commit({
    cells: [
      {
        site: 'ship-7',
        environment: 'prod',
        component: 'net',
        agent: 'a1',
        status: 'blocked',
        counts: null,
        reason: null,
        runId: h.runId,
        plannedAt: h.clock.now(),
        receivedAt: h.clock.now(),
        expectedIntervalS: null,
        planHash: null,
        staleNotifiedFor: null,
        ref: 'pr/1',
        atRef: 'pr/1',
        commit: commitId('a'),
        needs: ['registry.terraform.io/hashicorp/aws 5.31.0 linux_amd64'],
      },
    ],
  });
  const list: Example[] = [
    { op: 'GET /api/openapi.json', url: `${H}/api/openapi.json`, status: 200 },
    { op: 'GET /api/matrix', url: `${H}/api/matrix?site=ship-7&stale=false`, status: 200 },
    { op: 'GET /api/matrix', url: `${H}/api/matrix?at=yesterday`, status: 400 },
    { op: 'GET /api/sites', url: `${H}/api/sites`, status: 200 },
    { op: 'GET /api/fleet', url: `${H}/api/fleet`, status: 200 },
    { op: 'GET /api/sites/{site}', url: `${H}/api/sites/ship-7`, status: 200 },
    { op: 'GET /api/sites/{site}', url: `${H}/api/sites/nowhere`, status: 404 },
    {
      op: 'GET /api/cells/{site}/{environment}/{component}/runs',
      url: `${H}/api/cells/ship-7/prod/net/runs?limit=5`,
      status: 200,
    },
    {
      op: 'GET /api/cells/{site}/{environment}/{component}/runs',
      url: `${H}/api/cells/ship-7/prod/net/runs?limit=0`,
      status: 400,
    },
    { op: 'GET /api/runs/{runId}', url: `${H}/api/runs/${h.runId}`, status: 200 },
    { op: 'GET /api/runs/{runId}', url: `${H}/api/runs/nope`, status: 404 },
    { op: 'GET /api/plan-requests', url: `${H}/api/plan-requests?site=ship-7`, status: 200 },
    { op: 'POST /api/plan-requests', url: `${H}/api/plan-requests`, init: jsonPost(PLAN), status: 201 },
    {
      op: 'POST /api/plan-requests',
      url: `${H}/api/plan-requests`,
      init: jsonPost({ site: 1 }),
      status: 400,
    },
    {
      op: 'POST /api/plan-requests',
      url: `${H}/api/plan-requests`,
      init: jsonPost({ ...PLAN, component: 'x' }),
      status: 422,
    },
    { op: 'GET /api/plan-requests/{requestId}', url: `${H}/api/plan-requests/${requestId}`, status: 200 },
    { op: 'GET /api/events', url: `${H}/api/events`, status: 200 },
    { op: 'GET /api/refs', url: `${H}/api/refs?limit=5`, status: 200 },
    { op: 'GET /api/refs', url: `${H}/api/refs?limit=0`, status: 400 },
    {
      op: 'GET /api/refs/{ref}/status',
      url: `${H}/api/refs/pr%2F1/status?commit=${commitId('a')}`,
      status: 200,
    },
    { op: 'GET /api/refs/{ref}/status', url: `${H}/api/refs/pr%2F1/status?commit=abc`, status: 400 },
    {
      op: 'GET /api/refs/{ref}/status',
      url: `${H}/api/refs/pr%2F9/status?commit=${commitId('b')}`,
      status: 404,
    },
    { op: 'GET /api/needs', url: `${H}/api/needs?site=ship-7`, status: 200 },
    { op: 'GET /api/needs', url: `${H}/api/needs?site=`, status: 400 },
    { op: 'GET /api/sources', url: `${H}/api/sources?site=ship-7`, status: 200 },
    { op: 'GET /api/sources', url: `${H}/api/sources?site=no%20such`, status: 400 },
    { op: 'GET /api/sources', url: `${H}/api/sources?site=nowhere`, status: 404 },
    { op: 'GET /api/events', url: `${H}/api/events?lastEventId=a&lastEventId=b`, status: 400 },
    { op: 'GET /api/session', url: `${H}/api/session`, status: 200 },
    { op: 'POST /api/session', url: `${H}/api/session`, init: jsonPost({ token: admin.token }), status: 200 },
    { op: 'POST /api/session', url: `${H}/api/session`, init: jsonPost({ nope: 1 }), status: 400 },
    { op: 'DELETE /api/session', url: `${H}/api/session`, init: { method: 'DELETE' }, status: 204 },
    { op: 'GET /api/audit', url: `${H}/api/audit?limit=2`, status: 200 },
    { op: 'GET /api/audit', url: `${H}/api/audit?before=x`, status: 400 },
    { op: 'GET /api/publications', url: `${H}/api/publications?site=ship-7`, status: 200 },
    {
      op: 'POST /api/publications',
      url: `${H}/api/publications?site=ship-7&name=b.txt`,
      init: { method: 'POST', body: 'x' },
      status: 201,
    },
    {
      op: 'POST /api/publications',
      url: `${H}/api/publications?site=ship-7`,
      init: { method: 'POST', body: 'x' },
      status: 400,
    },
    {
      op: 'GET /api/publications/{publicationId}',
      url: `${H}/api/publications/${publicationId}`,
      status: 200,
    },
    { op: 'GET /api/publications/{publicationId}', url: `${H}/api/publications/nope`, status: 404 },
    // The deprecated names (decision 170): the same answers with the old field names.
    { op: 'GET /api/bundles', url: `${H}/api/bundles?site=ship-7`, status: 200 },
    {
      op: 'POST /api/bundles',
      url: `${H}/api/bundles?site=ship-7&name=c.txt`,
      init: { method: 'POST', body: 'x' },
      status: 201,
    },
    {
      op: 'POST /api/bundles',
      url: `${H}/api/bundles?site=ship-7`,
      init: { method: 'POST', body: 'x' },
      status: 400,
    },
    { op: 'GET /api/bundles/{bundleId}', url: `${H}/api/bundles/${publicationId}`, status: 200 },
    { op: 'GET /api/bundles/{bundleId}', url: `${H}/api/bundles/nope`, status: 404 },
    { op: 'GET /metrics', url: `${H}/metrics`, status: 200 },
    { op: 'GET /', url: `${H}/`, status: 200 },
    { op: 'GET /', url: `${H}/?token=wrong`, status: 303 },
    { op: 'GET /assets/{file}', url: `${H}/assets/app.js`, status: 200 },
    { op: 'GET /v1/health', url: `${V}/v1/health`, status: 200 },
    { op: 'GET /v1/peer', url: `${V}/v1/peer`, status: 200 },
    {
      op: 'POST /v1/peer/wire2',
      url: `${V}/v1/peer/wire2`,
      init: jsonPost(strangerRegistration),
      status: 403,
    },
    { op: 'POST /v1/peer/wire2', url: `${V}/v1/peer/wire2`, init: jsonPost({ site: 'ship-7' }), status: 400 },
    {
      op: 'POST /v2',
      url: `${V}/v2`,
      init: { method: 'POST', headers: { 'content-type': wire2.WIRE2_CONTENT_TYPE }, body: pull },
      status: 401,
    },
    {
      op: 'POST /v1/status',
      url: `${V}/v1/status`,
      init: jsonPost({
        at: 1,
        version: '0.1.0',
        custody: { bundles: 0, bytes: 0, oldestAt: null },
        upstreamRefusals: {},
        sitesRefused: [],
        sites: ['ship-7'],
        upstreams: [],
      }),
      status: 200,
    },
    { op: 'POST /v1/status', url: `${V}/v1/status`, init: jsonPost({ at: 'now' }), status: 400 },
    {
      op: 'POST /v1/downlink/watch',
      url: `${V}/v1/downlink/watch`,
      init: jsonPost({ wait: 0, sites: { 'ship-7': '0' } }),
      status: 200,
    },
    {
      op: 'POST /v1/downlink/watch',
      url: `${V}/v1/downlink/watch`,
      init: jsonPost({ wait: 'soon', sites: {} }),
      status: 400,
    },
    {
      op: 'POST /v1/bundles',
      url: `${V}/v1/bundles`,
      init: { method: 'POST', headers: { 'content-type': BATCH_CONTENT_TYPE }, body: batch },
      status: 200,
    },
    {
      op: 'POST /v1/bundles',
      url: `${V}/v1/bundles`,
      init: { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x' },
      status: 415,
    },
    { op: 'GET /v1/bundles', url: `${V}/v1/bundles?for=ship-7`, status: 200 },
    { op: 'GET /v1/bundles', url: `${V}/v1/bundles`, status: 400 },
    { op: 'GET /v1/blobs/{sha256}', url: `${V}/v1/blobs/${'0'.repeat(64)}`, status: 404 },
    { op: 'GET /v1/blobs/{sha256}', url: `${V}/v1/blobs/xyz`, status: 400 },
    {
      op: 'OPTIONS /v1/uploads',
      url: `${V}/v1/uploads`,
      init: { method: 'OPTIONS', headers: tus },
      status: 204,
    },
    {
      op: 'POST /v1/uploads',
      url: `${V}/v1/uploads`,
      init: {
        method: 'POST',
        headers: { ...tus, 'upload-length': '3', 'upload-metadata': `sha256 ${b64(sha)}` },
      },
      status: 201,
    },
    {
      op: 'HEAD /v1/uploads/{uploadId}',
      url: `${V}/v1/uploads/${up}`,
      init: { method: 'HEAD', headers: tus },
      status: 200,
    },
    {
      op: 'PATCH /v1/uploads/{uploadId}',
      url: `${V}/v1/uploads/${up}`,
      init: {
        method: 'PATCH',
        headers: { ...tus, 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' },
        body: blob,
      },
      status: 204,
    },
    { op: 'GET /v1/blobs/{sha256}', url: `${V}/v1/blobs/${sha}`, status: 200 },
    {
      op: 'DELETE /v1/uploads/{uploadId}',
      url: `${V}/v1/uploads/${doomed}`,
      init: { method: 'DELETE', headers: tus },
      status: 204,
    },
    {
      op: 'OPTIONS /v1/uploads/{uploadId}',
      url: `${V}/v1/uploads/${up}`,
      init: { method: 'OPTIONS', headers: tus },
      status: 204,
    },
    ...(await approvalExamples(h)),
    ...(await driftExamples(h)),
    // The examples each route entry carries (routes/route.ts `examples`).
    ...API_ROUTES.flatMap((r) =>
      (r.examples ?? []).map((e) => ({
        op: `${r.method} ${r.path.replace(/:(\w+)/g, '{$1}')}`,
        url: `${H}${e.url}`,
        status: e.status,
      })),
    ),
  ];
  return { list, admin: admin.authorization, token: admin.token };
}
