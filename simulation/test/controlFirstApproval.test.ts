import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type BusySite, startBusySite } from './busySite.js';
import { until } from './support.js';

/**
 * Control first at the last hop, for an approval (issue 35; docs/decisions/270-control-first.md): hub,
 * relay and agent as processes, the agent behind a link of D = 4 s one way whose uplink carries 1 kB/s,
 * busy with its plan's detail upload (minutes at that rate). An approval of that plan made at headquarters
 * is recorded at the agent within 3.5 × the floor (the goal, 1.2 ×, is the bench's) (hub → relay → agent light time, measured over the same
 * links), long before the detail is up, and the plan is applied. The relay pulls from the hub every
 * 250 ms: a smaller share of the light time than the demo's 1 s on the Mars link (12 s).
 */
const D = 4000;
let dir = '';
let site: BusySite | null = null;
afterAll(async () => {
  await site?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
}, 60_000);

describe('control first at the last hop: an approval', () => {
  it('reaches a busy agent within the held-pull bound (goal 1.2 ×, the bench), and is applied before its detail upload ends', {
    timeout: 900_000,
  }, async (ctx) => {
    dir = mkdtempSync(join(tmpdir(), 'driftline-approval-'));
    site = await startBusySite({
      dir,
      link: { settings: { uplink: { delayMs: D, bandwidthBps: 8000 }, downlink: { delayMs: D } } },
      extraResources: 3000,
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
    const floorMs = await s.floorMs();
    // The floor measured is the link's configured delay (plus the lan hop's few ms), never less.
    expect(floorMs).toBeGreaterThanOrEqual(D);
    expect(floorMs).toBeLessThan(1.1 * D);

    // A connected agent: the agent's held pull waits at the relay (after an answer, none is there for two
    // light times, and the hold's end starts another gap: docs/decisions/270-control-first.md).
    await s.heldPullWaiting(D);
    await s.approve(runId);
    const received = await until('the approval recorded at the agent', async () =>
      s.line('approval received'),
    );
    const submitted = Date.parse(((await s.journey(runId)) as { submittedAt: string }).submittedAt);
    const receiptVsFloor = ((received.time as number) - submitted) / floorMs;
    expect(receiptVsFloor).toBeGreaterThanOrEqual(1);
    // The goal is 1.2 × (bench `controlLatency` measures it on a quiet machine: 1.06×). What the design
    // guarantees today is 3 light times: after each answer to a held pull none waits at the relay for two
    // (docs/decisions/270-control-first.md, the plan request's 2.60×), and beside the whole suite the
    // processes' own work stretches it further (1.03×, 1.85×, 2.05× seen). The test holds the mechanism:
    // within that bound, where waiting for the upload (minutes) or for the next interval pull (30 s = 7.5
    // light times) could not be.
    expect(receiptVsFloor).toBeLessThanOrEqual(3.5);
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
