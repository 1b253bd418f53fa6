import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runProgram } from '../../src/topology/programs.js';
import { until } from '../support.js';
import { startVirtualWorld } from './virtualWorld.js';
import type { World } from './world.js';

/**
 * `relay token revoke` while the agent's held pulls are open at relay-1
 * (docs/decisions/411-revocation-cuts-at-once.md): the relay closes them at once (401, counted), and a
 * plan request queued after the command returned never reaches the agent, though it reaches relay-1.
 */

let world: World | undefined;
afterAll(() => world?.stop());

describe('revocation during a held pull', () => {
  it('closes the revoked agent’s held pulls, and the plan request queued after never reaches it', async () => {
    world = await startVirtualWorld();
    const w = world;
    // The start-up run's result acknowledged by the hub (not only the first, empty ack): nothing more goes
    // down to ship-1, so its held pulls stand at relay-1 until the revoke. Waiting for the first ack alone
    // let the result's ack answer the held pulls around the revoke: on a loaded machine the next pulls
    // came after it, were refused at once, and no held pull was left to close (CI, stop 52).
    await until('the hub ack of the start-up run', async () =>
      w.logLines('ship-1', /hub acknowledged/).some((l) => Number(l.runsAcked) >= 1),
    );
    // every refusal the agent logs: a pull, or a push (its wording is the agent's own)
    const REFUSED = /downlink pull failed|no upstream reachable|refused by/;
    await until(
      'the agent to hold a pull open at relay-1',
      async () => (await w.relayMetric('driftline_hop_held_requests_open')) >= 1,
    );
    const pullFailures = () => w.logLines('ship-1', REFUSED).length;
    await runProgram('relay', ['token', 'revoke', 'ship-1', '--config', join(w.dir, 'relay-1.yaml')]);
    const sentToRelay = await w.hubMetric('driftline_hop_bytes_out_total', { peer: 'relay-1' });
    const created = await until('the hub to accept a plan request', async () => {
      const r = await w.api('/api/plan-requests', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ site: 'ship-1', environment: 'prod', component: 'network' }),
      });
      return r.ok ? ((await r.json()) as { requestId: string }) : false;
    });
    // Closed at once, not at the end of their hold, and counted.
    await until(
      'relay-1 to close the revoked held pulls',
      async () => (await w.relayMetric('driftline_hop_revoked_requests_closed_total')) >= 1,
    );
    // The request went down to relay-1 (it pulls the hub's downlink) ...
    await until('relay-1 to take the plan request from the hub', async () => {
      return (await w.hubMetric('driftline_hop_bytes_out_total', { peer: 'relay-1' })) > sentToRelay;
    });
    // ... and the agent kept trying (refused each time) well after it got there, and never received it.
    const failed = pullFailures();
    await until(
      'the agent to be refused three more times',
      async () => pullFailures() >= failed + 3,
      120_000,
    );
    // Refused, not unreachable (`refused by <upstream>: unauthorized …` since decision 416; 401 before).
    expect(JSON.stringify(w.logLines('ship-1', REFUSED).slice(-3))).toMatch(/unauthorized|401/);
    expect(
      w.logLines('ship-1', /plan request received/).filter((l) => l.requestId === created.requestId),
    ).toEqual([]);
  });
});
