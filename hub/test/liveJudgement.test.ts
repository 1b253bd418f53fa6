import { FleetResponseSchema, type HubEvent, type RelayStatus } from '@driftline/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { sha256Hex } from '../src/adapters/http/credentials.js';
import { SILENT_AFTER_MS } from '../src/core/relayProblems.js';
import { startHub, type TestHub } from './hubFixture.js';
import { addTestUser } from './users.js';

/**
 * Issue 58 item 3, "live is live": what time alone changes (a relay going silent, a contact window
 * opening) reaches an open dashboard as an event from the sweep, not only with the next ingest.
 */

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0)) await f();
});

const status = (at: number): RelayStatus => ({
  at,
  version: '0.1.0',
  custody: { bundles: 0, bytes: 0, oldestAt: null },
  upstreamRefusals: {},
  sitesRefused: [],
  sites: ['ship-7'],
  upstreams: [{ name: 'hub', ok: true, code: null, message: null }],
});

async function hubWithListener(extra: object = {}) {
  const h: TestHub = await startHub(extra);
  cleanup.push(h.close);
  const got: HubEvent[] = [];
  // A dashboard listening: the hub sends live events only then.
  const off = h.hub.events.subscribe((e) => got.push(e.event));
  cleanup.unshift(async () => off());
  return { h, got };
}

describe('time-driven changes on the live stream', () => {
  it('sends an event naming a relay the moment a sweep finds it silent, and one when it reports again', async () => {
    const { h, got } = await hubWithListener();
    const tokenSha256 = sha256Hex('relay-token');
    await h.hub.store.commit({
      peerStatuses: [{ tokenSha256, status: status(h.clock.now()), at: h.clock.now() }],
    });
    await h.hub.sweepOnce();
    expect(got.filter((e) => e.type === 'fleet-judged' && e.relays.length > 0)).toEqual([]);

    h.clock.advance(SILENT_AFTER_MS + 60_000);
    await h.hub.sweepOnce();
    const judged = got.filter((e) => e.type === 'fleet-judged');
    expect(judged.at(-1)).toMatchObject({ type: 'fleet-judged', relays: ['relay-1'], sites: [] });

    // What the event announces is what the API answers now.
    const admin = { authorization: (await addTestUser(h.hub.store, 'ada', ['admin'])).authorization };
    const fleet = FleetResponseSchema.parse(
      await (await fetch(`${h.url}/api/fleet`, { headers: admin })).json(),
    );
    expect(fleet.attentionGroups?.rows.map((r) => r.kind)).toContain('silent-relay');

    got.length = 0;
    await h.hub.store.commit({
      peerStatuses: [{ tokenSha256, status: status(h.clock.now()), at: h.clock.now() }],
    });
    await h.hub.sweepOnce();
    expect(got.filter((e) => e.type === 'fleet-judged').at(-1)).toMatchObject({ relays: ['relay-1'] });
  });

  it('sends the site and an event naming it when a contact window opens, with nothing ingested', async () => {
    const t0 = Date.parse('2025-06-01T12:00:00.000Z');
    const window = 'every 4m for 40s from 2025-06-01T12:00:00Z';
    const { h, got } = await hubWithListener({ contactPlans: { sites: { 'ship-7': [window] } } });
    // the agent says it holds the hub's window (its hubWindows fact): only then is it judged (decision 590)
    const [a1] = await h.hub.store.listAgents('ship-7');
    if (!a1) throw new Error('no agent');
    await h.hub.store.commit({ agents: [{ ...a1, hubWindows: [window] }] });
    h.clock.advance(t0 + 60_000 - h.clock.now()); // heard in the 12:00 window; now waiting for 12:04
    await h.hub.sweepOnce();
    got.length = 0;

    h.clock.advance(3 * 60_000 + 10_000); // 12:04:10, in the window
    await h.hub.sweepOnce();
    const site = got.find((e) => e.type === 'site-updated');
    expect(site?.type === 'site-updated' && site.site.contact?.state).toBe('in-window');
    expect(got.filter((e) => e.type === 'fleet-judged').at(-1)).toMatchObject({
      sites: ['ship-7'],
      relays: [],
    });
  });

  it('sends a quiet sweep as a heartbeat at least once a minute, saying when the next comes at the latest', async () => {
    const { h, got } = await hubWithListener({ sweepIntervalS: 15 });
    await h.hub.sweepOnce();
    const first = got.filter((e) => e.type === 'fleet-judged');
    expect(first).toHaveLength(1);
    expect(first[0]).toMatchObject({ sites: [], relays: [], withinS: 75 });
    h.clock.advance(15_000);
    await h.hub.sweepOnce();
    expect(got.filter((e) => e.type === 'fleet-judged')).toHaveLength(1);
    h.clock.advance(45_000);
    await h.hub.sweepOnce();
    expect(got.filter((e) => e.type === 'fleet-judged')).toHaveLength(2);
  });
});
