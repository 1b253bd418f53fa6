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

const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

/** A run like the fixture's, pointing at `detailBlob` (which may not be at the hub). */
async function runWithDetail(h: TestHub, runId: string, detailBlob: string | null) {
  const base = await h.hub.store.getRun(h.runId);
  if (!base) throw new Error('the fixture run is missing');
  await h.hub.store.commit({ runs: [{ ...base, runId, detailBlob }] });
}

async function adopt(h: TestHub, bytes: Uint8Array): Promise<string> {
  const tmp = join(h.dir, `${sha(bytes)}.tmp`);
  writeFileSync(tmp, bytes);
  await new FileBlobs(join(h.dir, 'blobs')).adopt(sha(bytes), tmp);
  return sha(bytes);
}

describe('GET /api/runs/:runId detail state', () => {
  it('says whether the per-resource detail is pending, arrived, unreadable or not part of the run', async () => {
    const h = await startHub();
    hubs.push(h);
    const v = await addTestUser(h.hub.store, 'vera', ['viewer']);
    const get = async (runId: string) => {
      const res = await fetch(`${h.url}/api/runs/${runId}`, { headers: v });
      expect(res.status).toBe(200);
      return RunDetailSchema.parse(await res.json());
    };
    const detail = brotliCompressSync(
      Buffer.from(
        JSON.stringify({
          resources: [
            {
              address: 'aws_instance.app',
              type: 'aws_instance',
              actions: ['delete', 'create'],
              drift: false,
              changedAttributes: ['ami'],
            },
          ],
        }),
      ),
    );
    const announced = sha(detail);
    await runWithDetail(h, '01JZZZZZZZZZZZZZZZZZZZZZZ1', announced);
    await runWithDetail(h, '01JZZZZZZZZZZZZZZZZZZZZZZ2', null);

    const pending = await get('01JZZZZZZZZZZZZZZZZZZZZZZ1');
    expect([pending.detailState, pending.detailAvailable]).toEqual(['pending', false]);
    expect((await get('01JZZZZZZZZZZZZZZZZZZZZZZ2')).detailState).toBe('none');

    await adopt(h, detail);
    const arrived = await get('01JZZZZZZZZZZZZZZZZZZZZZZ1');
    expect([arrived.detailState, arrived.detailAvailable]).toEqual(['arrived', true]);
    expect(arrived.summary.resources?.map((r) => r.address)).toEqual(['aws_instance.app']);

    const garbage = await adopt(h, Buffer.from('not brotli at all'));
    await runWithDetail(h, '01JZZZZZZZZZZZZZZZZZZZZZZ3', garbage);
    const bad = await get('01JZZZZZZZZZZZZZZZZZZZZZZ3');
    expect([bad.detailState, bad.detailAvailable]).toEqual(['unreadable', false]);
  });
});
