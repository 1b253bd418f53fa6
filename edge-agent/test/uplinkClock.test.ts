import { createHopServer, type HopServer, MemoryHopBackend } from '@driftline/hop';
import { makeBundle } from '@driftline/hop/testing';
import { encodeBatch } from '@driftline/protocol';
import type { UrlStorage } from 'tus-js-client';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpUplink } from '../src/adapters/http/HttpUplink.js';
import { tempDir } from './helpers/storeFixtures.js';

const AGENT_AHEAD_MS = 7 * 60_000;
const SERVER_BEHIND_MS = 90_000;
const noStorage = {} as UrlStorage;
const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

async function setup(trustedClock = false) {
  const backend = new MemoryHopBackend({ name: 'relay', role: 'relay' });
  backend.addToken('agent-token', { name: 'ship-7', sites: ['ship-7'] });
  const hop: HopServer = createHopServer(backend, {
    uploads: { directory: tempDir('driftline-clock-') },
    now: () => Date.now() - SERVER_BEHIND_MS,
  });
  const { url } = await hop.listen(0, '127.0.0.1');
  cleanup.push(() => hop.close());
  const uplink = new HttpUplink({
    url,
    token: 'agent-token',
    urlStorage: noStorage,
    now: () => Date.now() + AGENT_AHEAD_MS,
    source: 'ship-7/a1',
    trustedClock,
  });
  return { backend, uplink };
}

describe('the agent’s clock against its upstream', () => {
  it('estimates its offset from the times of its exchanges and sends it with its bundles', async () => {
    const { backend, uplink } = await setup();
    expect(uplink.clock()).toBeNull();
    // The probe's exchanges lie within the round trip the test sees around it (the agent's clock is the same
    // clock shifted): the uncertainty is at most half of it (+1 for rounding and drift), however slow the machine.
    const before = Date.now();
    expect((await uplink.probe()).ok).toBe(true);
    const seenRoundTrip = Date.now() - before;
    const own = uplink.clock();
    const truth = AGENT_AHEAD_MS + SERVER_BEHIND_MS;
    expect(Math.abs((own?.offsetMs ?? 0) - truth)).toBeLessThanOrEqual((own?.uncertaintyMs ?? 0) + 1);
    expect(own?.uncertaintyMs).toBeLessThanOrEqual(Math.ceil(seenRoundTrip / 2) + 1);
    expect((await uplink.postBundles(encodeBatch([(await makeBundle()).bytes]))).ok).toBe(true);
    const atRelay = backend.lastClocks?.('ship-7/a1');
    expect(Math.abs((atRelay?.offsetMs ?? 0) - truth)).toBeLessThanOrEqual((atRelay?.uncertaintyMs ?? 0) + 1);
  });

  it('says trusted, not an offset, when its clock is disciplined', async () => {
    const { backend, uplink } = await setup(true);
    expect((await uplink.postBundles(encodeBatch([(await makeBundle()).bytes]))).ok).toBe(true);
    expect(backend.lastClocks?.('ship-7/a1')).toMatchObject({ offsetMs: 0, uncertaintyMs: 0, trusted: true });
  });
});
