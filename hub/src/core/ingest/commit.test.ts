import { describe, expect, it } from 'vitest';
import { stepFixture } from '../../../test/ingestSteps.js';
import type { HubStore } from '../../ports/HubStore.js';
import { commitBatch } from './commit.js';
import { committedEvent } from './events.js';

describe('ingest steps: commit and events', () => {
  it('writes the batch in one commit, only agents it contacted, and reports what changed', async () => {
    const f = await stepFixture();
    const b = f.batch(0);
    const agent = await b.agent('ship-7', 'a1');
    expect(agent).not.toBeNull();
    expect(committedEvent(b)).toBeNull();
    await commitBatch(f.store, f.replicas, b);
    expect((await f.store.getAgent('ship-7', 'a1'))?.lastContactAt).toBe(agent?.lastContactAt);

    const c = f.batch(0);
    const row = await c.agent('ship-7', 'a1');
    if (row) row.lastContactAt = c.now + 1; // not contacted by this batch: not written
    c.sites.set('ship-7', {
      site: 'ship-7',
      lastContactAt: c.now,
      upstream: 'direct',
      unreachableNotifiedFor: null,
    });
    await commitBatch(f.store, f.replicas, c);
    expect((await f.store.getAgent('ship-7', 'a1'))?.lastContactAt).not.toBe(c.now + 1);
    expect(committedEvent(c)).toMatchObject({ sites: ['ship-7'], cells: [], runs: [] });
  });

  it('makes the replicas forget the documents it touched when the commit fails, and rethrows', async () => {
    const f = await stepFixture();
    const failing = Object.create(f.store) as HubStore;
    failing.commit = async () => {
      throw new Error('disk full');
    };
    const forgotten: string[] = [];
    const replicas = Object.assign(Object.create(f.replicas), {
      forget: (ids: Iterable<string>) => forgotten.push(...ids),
      settle: () => {},
    });
    const b = f.batch(0);
    b.touchedDocs.set('ship-7/a1/epoch-1', { site: 'ship-7', agent: 'a1', heads: [] });
    await expect(commitBatch(failing, replicas, b)).rejects.toThrow('disk full');
    expect(forgotten).toEqual(['ship-7/a1/epoch-1']);
  });
});
