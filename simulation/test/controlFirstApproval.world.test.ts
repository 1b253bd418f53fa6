import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { until } from './support.js';
import { startVirtualBusySite } from './virtualBusySite.js';

/**
 * Control first at the last hop, for an approval (issue 35; docs/decisions/270-control-first.md): hub,
 * relay and agent as processes, the agent behind the Mars link (D = 12 s one way) whose uplink carries 1 kB/s,
 * busy with its plan's detail upload (minutes at that rate). An approval of that plan made at headquarters
 * right after the agent got a downlink answer (the worst moment for a single held pull) is recorded at the
 * agent within 1.2 × the floor (the goal; hub → relay → agent light time, measured over the same links),
 * long before the detail is up, and the plan is applied. The relay pulls from the hub every 250 ms (0.02 ×).
 */
const D = 12_000;
let dir = '';
let site: Awaited<ReturnType<typeof startVirtualBusySite>> | null = null;
afterAll(async () => {
  await site?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('control first at the last hop: an approval', () => {
  it('reaches a busy agent within 1.2 × the floor, sent right after a downlink answer, and is applied before its detail upload ends', async (ctx) => {
    dir = mkdtempSync(join(tmpdir(), 'driftline-approval-'));
    site = await startVirtualBusySite({
      dir,
      link: { settings: { uplink: { delayMs: D, bandwidthBps: 8000 }, downlink: { delayMs: D } } },
      extraResources: 4000,
      relayPullIntervalMs: 250,
    });
    const s = site;
    const runId = await s.publishAndPlan(600_000);
    // The result is at the hub; its detail is still going up the slow uplink. Seen otherwise in about 3
    // runs of 7: the hub showed the run only once its detail had arrived (not traced yet; decision 270,
    // "Left out"). Then the agent is not busy and this run cannot show what the test is for: it says so
    // and is reported skipped, not passed.
    const before = await s.detailState(runId);
    if (before !== 'pending') {
      console.warn(
        `controlFirstApproval: the hub showed the plan only after its detail was up (${before}); the agent is not busy, nothing to measure`,
      );
      ctx.skip();
      return;
    }
    // Sent as the agent gets an answer (the hub's ack of its push, within a few light times): with one held
    // pull none waited at the relay then for two light times (docs/decisions/270-control-first.md, "Left
    // out"); with two, the other one waits (docs/decisions/340-no-gap-between-held-pulls.md). No ack in
    // time: sent anyway, at an arbitrary moment.
    if (!(await s.nextDownlink(5 * D)))
      console.warn('controlFirstApproval: no downlink within 5 D; approving now');
    await s.approve(runId);
    const received = await until('the approval recorded at the agent', async () =>
      s.line('approval received'),
    );
    const submitted = Date.parse(((await s.journey(runId)) as { submittedAt: string }).submittedAt);
    // Measured after (a round trip over the site link: done before, it let the ack's answer go by).
    const floorMs = await s.floorMs();
    // The floor measured is the link's configured delay (plus the lan hop's few ms), never less.
    expect(floorMs).toBeGreaterThanOrEqual(D);
    expect(floorMs).toBeLessThan(1.1 * D);
    const receiptVsFloor = ((received.time as number) - submitted) / floorMs;
    console.info(`controlFirstApproval: approval received ${receiptVsFloor.toFixed(2)} × the floor`);
    // Never faster than light: the floor is half of one measured round trip per link, so allow its jitter
    // (0.9995 × seen once).
    expect(receiptVsFloor).toBeGreaterThanOrEqual(0.95);
    // The goal, 1.2 × (bench `controlLatency` too). Since decision 340 a held pull waits at the relay at every
    // instant, so the design gives one light time plus the relay's pull from the hub (250 ms, 0.02 ×) and
    // the processes' own work, which a loaded machine stretches (0.99 × beside the whole suite). With a
    // single held pull the same moment took about 2 × (2.14 × in decision 270's first run, at D = 4 s).
    expect(receiptVsFloor).toBeLessThanOrEqual(1.2);
    // Recorded while the detail upload is still in flight.
    expect(await s.detailState(runId)).toBe('pending');

    const applied = await until(
      'the apply to finish at the agent',
      async () => s.line('apply finished', (l) => l.runId === runId),
      300_000,
    );
    expect(applied.state).toBe('applied');
    // Applied while the detail is still on its way (the hub has not got it). The bytes the uplink carried
    // meanwhile are not asserted: once the detail's last byte is at the relay the site link is idle while
    // the hub still says pending (seen once: 347 B between approval and apply), so they tell nothing here.
    expect(await s.detailState(runId)).toBe('pending');
    // The hub learns it (the report goes up once the detail upload in flight is done: decision 270).
    const journey = await until(
      'the hub to show the run applied',
      async () => {
        const j = await s.journey(runId);
        return j?.state === 'applied' ? j : undefined;
      },
      600_000,
    );
    expect(journey.reason).toBeNull();
  });
});
