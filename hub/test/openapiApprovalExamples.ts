import { publicKeyToText } from '@driftline/protocol';
import { applySite, approverKeys, claimsFor, planWithFile, sign } from './applySim.js';
import type { TestHub } from './hubFixture.js';
import type { Example } from './openapiExample.js';

/** Examples of the approval operations: a site with an apply-enabled run, approved, refused, listed. */
export async function approvalExamples(h: TestHub): Promise<Example[]> {
  const sim = await applySite(h);
  const runId = await planWithFile(h, sim);
  const keys = await approverKeys();
  const other = await approverKeys();
  // The hub takes approvals signed by keys an approver record holds (decision 250).
  await h.hub.store.commit({
    approvers: [
      { name: 'Ada', key: await publicKeyToText(keys.publicKey), addedAt: h.clock.now() },
      { name: 'Grace', key: await publicKeyToText(other.publicKey), addedAt: h.clock.now() },
    ],
  });
  const good = await sign(claimsFor(h, runId), keys);
  // Another approver's valid approval that reuses the first one's id.
  const reused = await sign(good.claims, other);
  const post = (body: unknown): RequestInit => ({
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const H = h.url;
  return [
    { op: 'GET /api/approvers', url: `${H}/api/approvers`, status: 200 },
    { op: 'POST /api/approvals', url: `${H}/api/approvals`, init: post(good), status: 201 },
    { op: 'POST /api/approvals', url: `${H}/api/approvals`, init: post(good), status: 200 },
    {
      op: 'POST /api/approvals',
      url: `${H}/api/approvals`,
      init: { method: 'POST', body: '{' },
      status: 400,
    },
    {
      op: 'POST /api/approvals',
      url: `${H}/api/approvals`,
      init: post({ ...good, signature: good.signature.replace(/^./, (c) => (c === 'A' ? 'B' : 'A')) }),
      status: 422,
    },
    {
      op: 'POST /api/approvals',
      url: `${H}/api/approvals`,
      init: post(reused),
      status: 409,
    },
    {
      op: 'POST /api/approvals',
      url: `${H}/api/approvals`,
      init: post({ pad: 'x'.repeat(20_000) }),
      status: 413,
    },
    { op: 'GET /api/approvals', url: `${H}/api/approvals?site=mars-1&runId=${runId}`, status: 200 },
    { op: 'GET /api/approvals', url: `${H}/api/approvals?site=Bad%20Site`, status: 400 },
  ];
}
