import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { World } from './World.js';

const MIN = 60_000;
const HOUR = 60 * MIN;

/** `driftline_hop_requests_total` of one route (every status), from the hub's `/metrics`. */
function requests(metrics: string, route: string): number {
  return metrics
    .split('\n')
    .filter((l) => l.startsWith('driftline_hop_requests_total{') && l.includes(`route="${route}"`))
    .reduce((n, l) => n + Number(l.split(' ').at(-1)), 0);
}

/**
 * One watch for all of a relay's sites (docs/decisions/620-one-watch-for-all-sites.md): the relay asks the
 * hub once, held, which of its sites have downlink, and pulls only those, when they have it. Before, it
 * pulled each site every minute (the world's pull interval; 10 s by default): 70 % of a 30-site world's
 * exchanges, and control waited up to an interval at the hub.
 */
describe("a relay's downlink from the hub, watched instead of polled", () => {
  let world: World;
  const SITES = 10;
  beforeAll(async () => {
    world = new World({ seed: 620, sites: SITES, components: 1, contact: null, oneWayMs: 2000 });
    await world.start();
  });
  afterAll(async () => {
    await world?.close();
  });

  it('pulls a site only when the hub has something for it: over three hours, no pull finds nothing', async () => {
    await world.run(10 * MIN);
    const before = (await world.hubCall('/metrics')).text;
    const pulled = countPulls(world);
    await world.run(3 * HOUR);
    const after = (await world.hubCall('/metrics')).text;
    const pulls = requests(after, '/v1/bundles') - requests(before, '/v1/bundles');
    const watches = requests(after, '/v1/downlink/watch') - requests(before, '/v1/downlink/watch');
    // the agents' pushes post to /v1/bundles too: count the relay's pulls (GETs) by what they found
    pulled.stop();
    expect(pulled.counts.empty).toBe(0);
    expect(pulled.counts.found).toBeGreaterThan(0);
    // polled, it would have been 10 sites × 180 minutes = 1,800 pulls
    expect(pulled.counts.found).toBeLessThan(SITES * 180 * 0.25);
    // each watch is answered with sites to pull or at its hold's end (an hour)
    expect(watches).toBeLessThanOrEqual(pulled.counts.found + 3);
    // the relay's own posts of its agents' pushes go to /v1/bundles as well
    expect(pulls).toBeGreaterThan(pulled.counts.found);
  });

  it('has a plan request at the relay one round trip of its link after it is made, not a pull interval later', async () => {
    const made = await world.hubCall('/api/plan-requests', {
      method: 'POST',
      body: { site: 'site-004', environment: 'prod', component: 'stack-0' },
    });
    expect(made.status).toBe(201);
    const { requestId, requestedAt } = made.json as { requestId: string; requestedAt: string };
    const relayAt = await world.lookUntil(
      'the request at the relay',
      async () =>
        (await world.hubApi<{ relayAt?: string | null }>(`/api/plan-requests/${requestId}`)).relayAt ?? false,
      5 * MIN,
      10,
    );
    // the watch's answer (20 ms down the relay's link) and the relay's pull of that site (20 ms up), which
    // the hub marks as the request reaching the relay
    expect(Date.parse(relayAt) - Date.parse(requestedAt)).toBe(40);
  });
});

/**
 * Counts the relay's pulls from the hub (`GET /v1/bundles` on the relay's link to the hub) by whether they
 * found something: a 304, or a 200 whose cursor is the one it sent, found nothing.
 */
function countPulls(world: World) {
  const counts = { empty: 0, found: 0 };
  const net = world.net as unknown as {
    exchange: (from: string, target: string, init: { method?: string }) => Promise<Response>;
  };
  const original = net.exchange.bind(net);
  net.exchange = async (from, target, init) => {
    const res = await original(from, target, init);
    const url = new URL(target);
    if (init.method === 'GET' && url.pathname === '/v1/bundles' && url.hostname === 'hub.world') {
      const after = url.searchParams.get('after') ?? '0';
      const cursor = res.headers.get('driftline-cursor');
      if (res.status === 304 || (res.status === 200 && cursor === after)) counts.empty++;
      else if (res.status === 200) counts.found++;
    }
    return res;
  };
  const stop = () => {
    net.exchange = original;
  };
  return { counts, stop };
}

/**
 * A hop between the relay and the hub that answers every watch at once with every site (decision 620,
 * "A watch that lies"): the relay pulls them, finds nothing, and must not ask again at once: a false
 * alarm rests the watch a pull interval, so a lying hop costs what polling did, never a loop of requests.
 */
describe('a hop that answers every watch at once with every site', () => {
  let world: World;
  const SITES = 4;
  /** More lies than this and the hop turns honest: a relay that loops on it would stop the clock. */
  const CAP = 2000;
  let lies = 0;
  beforeAll(async () => {
    world = new World({ seed: 621, sites: SITES, components: 1, contact: null, oneWayMs: 2000 });
    const net = world.net as unknown as {
      exchange: (from: string, target: string, init: { method?: string }) => Promise<Response>;
    };
    const original = net.exchange.bind(net);
    net.exchange = async (from, target, init) => {
      const url = new URL(target);
      if (url.hostname === 'hub.world' && url.pathname === '/v1/downlink/watch' && lies < CAP) {
        lies++;
        const sites = Array.from({ length: SITES }, (_, i) => `site-${String(i + 1).padStart(3, '0')}`);
        return new Response(JSON.stringify({ sites, refused: [] }), {
          status: 200,
          headers: { 'content-type': 'application/json' },
        });
      }
      return original(from, target, init);
    };
    await world.start();
  });
  afterAll(async () => {
    await world?.close();
  });

  it('rests a pull interval after each false alarm: no more watches than a pull loop would make', async () => {
    await world.run(10 * MIN);
    const before = lies;
    const pulled = countPulls(world);
    await world.run(HOUR);
    pulled.stop();
    // the world's pull interval is a minute: about 60 false alarms in the hour, each followed by a pull of
    // every site; a round whose pulls took something (the agents' acks are downlink) watches again at once.
    // Without the rest it was 2,000 (the cap) in the first ten minutes.
    const watches = lies - before;
    expect(watches).toBeGreaterThan(30);
    expect(watches).toBeLessThanOrEqual(61 + pulled.counts.found);
    expect(pulled.counts.empty + pulled.counts.found).toBe(watches * SITES);
    expect(lies).toBeLessThan(CAP);
  });
});
