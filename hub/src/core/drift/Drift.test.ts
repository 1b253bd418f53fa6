import { describe, expect, it } from 'vitest';
import { MemoryDriftStore } from '../../adapters/memory/MemoryDriftStore.js';
import type { RunRow } from '../../ports/HubStore.js';
import { Drift } from './Drift.js';

const run = (i: number, n: number, drifted: boolean): RunRow =>
  ({
    runId: `r${i}-${n}`,
    site: `s-${i}`,
    environment: 'prod',
    component: 'net',
    plannedAt: n * 1000,
    summary: {
      status: drifted ? 'drift' : 'clean',
      drifted: drifted
        ? [{ address: `aws_s3_bucket.b${i % 2}`, type: 'aws_s3_bucket', attributes: ['tags'] }]
        : [],
    },
  }) as unknown as RunRow;

describe('Drift', () => {
  it('pages episodes by cursor to the end, and tells waived from open', async () => {
    let now = 10_000;
    const drift = new Drift({
      drift: new MemoryDriftStore(),
      commit: async () => {},
      clock: { now: () => now },
      ids: { next: () => '01J' },
      webhookUrls: [],
    });
    await drift.observe([1, 2, 3, 4, 5].map((i) => run(i, 1, true)));
    const pages: number[] = [];
    let cursor: string | undefined;
    for (let k = 0; k < 5; k++) {
      const p = await drift.list({ limit: 2, ...(cursor ? { cursor } : {}) });
      pages.push(p.episodes.length);
      if (!p.nextCursor) break;
      cursor = p.nextCursor;
    }
    expect(pages).toEqual([2, 2, 1]);
    await drift.addWaiver(
      { pattern: 'aws_s3_bucket.b1', expiresAt: now + 1000, reason: 'r' },
      { actor: 'ada', via: 'api', address: '' },
    );
    const waived = await drift.list({ limit: 10, state: 'waived' });
    expect(waived.episodes.map((e) => e.site).sort()).toEqual(['s-1', 's-3', 's-5']);
    expect((await drift.list({ limit: 1, state: 'open' })).nextCursor).not.toBeNull();
    expect((await drift.groups({ limit: 10 })).groups.map((g) => [g.address, g.open, g.waived])).toEqual([
      ['aws_s3_bucket.b1', 0, 3],
      ['aws_s3_bucket.b0', 2, 0],
    ]);
    now += 1000; // the waiver ends: the drift is back
    expect((await drift.list({ limit: 10, state: 'waived' })).episodes).toEqual([]);
    // The same plan confirmed (no new run): the episode's last seen moves with the cell.
    await drift.observe(
      [],
      [{ site: 's-2', environment: 'prod', component: 'net', runId: 'r2-1', plannedAt: 7000 } as never],
    );
    expect((await drift.list({ limit: 10, site: 's-2' })).episodes[0]).toMatchObject({
      state: 'open',
      lastSeen: new Date(7000).toISOString(),
      firstSeen: new Date(1000).toISOString(),
    });
    // A late run older than one already observed does not move the episode back.
    await drift.observe([run(1, 3, false), run(1, 2, true)]);
    expect((await drift.list({ limit: 10, site: 's-1' })).episodes[0]).toMatchObject({ state: 'resolved' });
  });
});
