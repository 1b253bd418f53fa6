import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliCompressSync } from 'node:zlib';
import { RunDetailSchema } from '@driftline/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { FileBlobs } from '../src/adapters/fs/FileBlobs.js';
import { startHub, type TestHub } from './hubFixture.js';
import { addTestUser } from './users.js';

const hubs: TestHub[] = [];
afterEach(async () => {
  for (const h of hubs.splice(0)) await h.close();
});

describe('a run made under redaction policy 2 (decision 210)', () => {
  it('keeps the policy and the masked addresses as the agent sent them, through the store to the API', async () => {
    const h = await startHub();
    hubs.push(h);
    const masked = 'aws_iam_user.u["user-\u27E8db_password:3f9a1c\u27E9"]';
    const detail = brotliCompressSync(
      Buffer.from(
        JSON.stringify({
          resources: [
            {
              address: masked,
              type: 'aws_iam_user',
              actions: ['create'],
              drift: false,
              changedAttributes: [],
            },
          ],
        }),
      ),
    );
    const sha = createHash('sha256').update(detail).digest('hex');
    const tmp = join(h.dir, `${sha}.tmp`);
    writeFileSync(tmp, detail);
    await new FileBlobs(join(h.dir, 'blobs')).adopt(sha, tmp);
    const base = await h.hub.store.getRun(h.runId);
    if (!base) throw new Error('the fixture run is missing');
    const runId = '01JZZZZZZZZZZZZZZZZZZZZZR2';
    await h.hub.store.commit({
      runs: [{ ...base, runId, detailBlob: sha, summary: { ...base.summary, redactionPolicy: '2' } }],
    });
    const res = await fetch(`${h.url}/api/runs/${runId}`, {
      headers: await addTestUser(h.hub.store, 'vera', ['viewer']),
    });
    expect(res.status).toBe(200);
    const run = RunDetailSchema.parse(await res.json());
    expect(run.summary.redactionPolicy).toBe('2');
    expect(run.summary.resources?.map((r) => r.address)).toEqual([masked]);
    // A run from before the policy has none: policy 1.
    const old = await fetch(`${h.url}/api/runs/${h.runId}`, {
      headers: await addTestUser(h.hub.store, 'vic', ['viewer']),
    });
    expect(RunDetailSchema.parse(await old.json()).summary.redactionPolicy).toBeUndefined();
  });
});
