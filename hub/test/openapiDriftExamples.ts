import { enrol } from '../src/core/enrolment.js';
import { AgentSim } from './agentSim.js';
import type { TestHub } from './hubFixture.js';
import type { Example } from './openapiExample.js';

/** Examples of `/api/drift` and `/api/waivers` (decision 421): a drifted site, an episode, a waiver. */
export async function driftExamples(h: TestHub): Promise<Example[]> {
  const sim = await AgentSim.create('drift-1', 'a1', h.clock);
  const e = await enrol(
    h.hub.store,
    { site: 'drift-1', agent: 'a1', key: await sim.publicKeyText() },
    h.clock.now(),
  );
  if (!e.ok) throw new Error(e.error);
  sim.plan('prod', 'net', 'drift', {
    summary: { drifted: [{ address: 'aws_s3_bucket.logs', type: 'aws_s3_bucket', attributes: ['tags'] }] },
  });
  await h.hub.ingest.accept('relay-1', [await sim.delta()]);
  await h.hub.drift.settled();
  const episode = (await h.hub.drift.list({ limit: 1, site: 'drift-1' })).episodes[0]?.id ?? 'none';
  const doomed = await h.hub.drift.addWaiver(
    { pattern: 'aws_s3_bucket.*', expiresAt: h.clock.now() + 3_600_000, reason: 'example' },
    { actor: 'cli', via: 'cli', address: 'local' },
  );
  const H = h.url;
  const post = (body: unknown): RequestInit => ({
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return [
    { op: 'GET /api/drift', url: `${H}/api/drift?state=open&limit=10`, status: 200 },
    { op: 'GET /api/drift', url: `${H}/api/drift?limit=0`, status: 400 },
    { op: 'GET /api/drift/groups', url: `${H}/api/drift/groups`, status: 200 },
    {
      op: 'POST /api/drift/{episodeId}/ack',
      url: `${H}/api/drift/${encodeURIComponent(episode)}/ack`,
      init: { method: 'POST' },
      status: 200,
    },
    {
      op: 'POST /api/drift/{episodeId}/ack',
      url: `${H}/api/drift/none/ack`,
      init: { method: 'POST' },
      status: 404,
    },
    { op: 'GET /api/waivers', url: `${H}/api/waivers`, status: 200 },
    {
      op: 'POST /api/waivers',
      url: `${H}/api/waivers`,
      init: post({
        pattern: 'aws_s3_bucket.logs',
        attributes: ['tags'],
        expires: '7d',
        reason: 'tagging job',
      }),
      status: 201,
    },
    {
      op: 'POST /api/waivers',
      url: `${H}/api/waivers`,
      init: post({ pattern: 'x', expires: 'never', reason: 'r' }),
      status: 400,
    },
    {
      op: 'DELETE /api/waivers/{waiverId}',
      url: `${H}/api/waivers/${doomed.id}`,
      init: { method: 'DELETE' },
      status: 200,
    },
    {
      op: 'DELETE /api/waivers/{waiverId}',
      url: `${H}/api/waivers/w-none`,
      init: { method: 'DELETE' },
      status: 404,
    },
  ];
}
