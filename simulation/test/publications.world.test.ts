import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type PublicationDetail, PublicationDetailSchema } from '@driftline/protocol';
import { afterAll, describe, expect, it } from 'vitest';
import type { WorldLink } from '../src/world/WorldLink.js';
import type { WorldNetwork } from '../src/world/WorldNetwork.js';
import { askPlan, planRequest } from './hostile/plans.js';
import { startVirtualWorld, type VirtualWorld } from './hostile/virtualWorld.js';
import { until } from './support.js';

/**
 * Publications end to end (decisions 050 and 170) in the deterministic world
 * (docs/decisions/540-deterministic-world.md): a file published at the hub goes hub → link A → relay →
 * link B → agent, every node in one process on virtual time, while each link drops its connections every
 * 4 MB toward the site (an exchange under way ends as a reset, and the link refuses for 300 ms) and the
 * relay crashes mid-fetch and opens its files again.
 *
 * The world carries an answer whole, at the end of its transfer, so what a drop loses is the Range chunk in
 * flight: relay and agent fetch 128 kB chunks, the in-flight buffer (`maxHeldBytes`) of the process test's
 * links, so a drop loses no more here than there.
 */
const SIZE = 24 * 1024 * 1024;
const CHUNK = 128 * 1024;
const CUT_EVERY = 4 * 1024 * 1024;
const RESTART_AT = 10 * 1024 * 1024;
/** 2 MB/s toward the site. */
const LINK = { downlink: { bandwidthBps: 16_000_000 } };

let w: VirtualWorld | null = null;
afterAll(async () => {
  await w?.stop();
});

/** Drops `from` → `to` every `every` bytes toward the site, for `downMs`; counts the drops and what each ended. */
function cutter(net: WorldNetwork, from: string, to: string, every: number, downMs: number) {
  const link = net.link(from, to) as WorldLink;
  let next = link.bytes.down + every;
  let cuts = 0;
  let ended = 0;
  let down = false;
  const timer = setInterval(() => {
    if (down || link.bytes.down < next) return;
    next = link.bytes.down + every;
    cuts++;
    down = true;
    link.cut('refuse');
    ended += net.reset(from, to);
    setTimeout(() => {
      link.heal();
      down = false;
    }, downMs);
  }, 20);
  return {
    cuts: () => cuts,
    /** Exchanges under way that the drops ended. */
    ended: () => ended,
    stop: () => clearInterval(timer),
  };
}

describe('publications, hub → relay → agent over dropped links (the deterministic world)', () => {
  it('places a 24 MB publication byte-identical through drops and a relay crash, ≤ 1.05 × size per link, while plan results go first', async () => {
    w = await startVirtualWorld({
      sites: ['ship-7'],
      relayLink: LINK,
      agentLink: LINK,
      relayForward: { pullIntervalMs: 1000, backoffMaxMs: 1000 },
      relayPublications: { intervalMs: 500, chunkBytes: CHUNK },
      agentPublications: {
        accept: { 'provider-mirror': { dir: './mirror' } },
        retryMs: 500,
        chunkBytes: CHUNK,
      },
      // as the program defaults them: hop v2, nothing sent again before 6 h
      agentSync: { wire: 2, resendAfterS: 21_600 },
    });
    const world = w;
    const site = join(world.dir, 'ship-7');
    const linkA = world.net.link('relay-1', 'hub') as WorldLink;
    const linkB = world.net.link('ship-7', 'relay-1') as WorldLink;
    /** Bytes that entered a link toward the site (an answer is counted as it leaves, lost in flight or not). */
    const downBytes = (l: WorldLink) => l.bytes.down;
    const allBytes = (l: WorldLink) => l.bytes.down + l.bytes.up;
    await until('the agent to report in', async () => {
      const r = await world.api('/api/sites/ship-7');
      return (
        r.ok &&
        ((await r.json()) as { agents: Array<{ lastContactAt: string | null }> }).agents[0]?.lastContactAt
      );
    });

    const data = randomBytes(SIZE);
    const sha = createHash('sha256').update(data).digest('hex');
    const published = await world.api(
      '/api/publications?site=ship-7&name=aws-5.80.zip&kind=provider-mirror',
      { method: 'POST', body: data },
    );
    expect(published.status).toBe(201);
    const publication = PublicationDetailSchema.parse(await published.json());
    expect(publication.sha256).toBe(sha);
    const publishedAt = Date.now();
    const [baseA, baseB] = [downBytes(linkA), downBytes(linkB)];
    const [baseAllA, baseAllB] = [allBytes(linkA), allBytes(linkB)];
    const cutA = cutter(world.net, 'relay-1', 'hub', CUT_EVERY, 300);
    const cutB = cutter(world.net, 'ship-7', 'relay-1', CUT_EVERY, 300);

    // A plan result made while the file is on its way reaches the hub before the file is through.
    await until('the relay to be fetching', async () => downBytes(linkA) - baseA >= 2 * 1024 * 1024);
    const requestId = await askPlan(world, 'ship-7');
    const askedAt = Date.now();
    const resultArrived = until('the plan result to reach the hub', async () => {
      return (await planRequest(world, requestId)).state === 'done';
    }).then(() => ({
      afterMs: Date.now() - askedAt,
      hubRelay: downBytes(linkA) - baseA,
      relayAgent: downBytes(linkB) - baseB,
    }));

    // The relay crashes mid-fetch (every exchange with it reset) and opens its files again.
    await until('the relay to be mid-fetch', async () => downBytes(linkA) - baseA >= RESTART_AT);
    const crashedAt = downBytes(linkA) - baseA;
    await world.crash('relay-1');

    const whenResultArrived = await resultArrived;
    expect(whenResultArrived.hubRelay).toBeLessThan(SIZE);
    expect(whenResultArrived.relayAgent).toBeLessThan(SIZE);
    // Within one look (250 ms) of the request: down both links and up again while the file goes down. (A
    // world link gives each exchange its bandwidth: what this shows is that nothing at the hub, the relay or
    // the agent queues the request or its result behind the file, not a share of the link.)
    expect(whenResultArrived.afterMs).toBeLessThanOrEqual(250);

    // `edge-agent status` shows the publication on its way to the site, with its offset.
    const midway = await until('edge-agent status to show the download', async () => {
      const st = (await world.agentStatus('ship-7')) as {
        publications: Array<{ publicationId: string; state: string; offset: number; size: number }>;
      };
      const b = st.publications.find((x) => x.publicationId === publication.publicationId);
      return b && b.state === 'downloading' && b.offset > 0 && b.offset < SIZE ? b : false;
    });
    expect(midway.size).toBe(SIZE);

    const placed = await until('the hub to see the publication placed', async () => {
      const r = await world.api(`/api/publications/${publication.publicationId}`);
      const b = PublicationDetailSchema.parse(await r.json());
      return b.deliveries.find((d) => d.site === 'ship-7' && d.state === 'placed') ? b : false;
    });
    const placedMs = Date.now() - publishedAt;
    cutA.stop();
    cutB.stop();
    const delivery = (placed as PublicationDetail).deliveries.find((d) => d.site === 'ship-7');
    expect(delivery).toMatchObject({ agent: 'a1', state: 'placed', bytes: SIZE, reason: null });

    const file = join(site, 'mirror', 'aws-5.80.zip');
    const got = readFileSync(file);
    expect(got.length).toBe(SIZE);
    expect(createHash('sha256').update(got).digest('hex')).toBe(sha);
    expect(readdirSync(join(site, 'mirror'))).toEqual(['aws-5.80.zip']); // no temp file left beside it

    const ratioA = (downBytes(linkA) - baseA) / SIZE;
    const ratioB = (downBytes(linkB) - baseB) / SIZE;
    const totalA = (allBytes(linkA) - baseAllA) / SIZE;
    const totalB = (allBytes(linkB) - baseAllB) / SIZE;
    console.info(
      JSON.stringify({
        fileBytes: SIZE,
        cuts: { hubRelay: cutA.cuts(), relayAgent: cutB.cuts() },
        exchangesEndedByCuts: { hubRelay: cutA.ended(), relayAgent: cutB.ended() },
        towardSiteOverSize: { hubRelay: ratioA, relayAgent: ratioB },
        bothWaysOverSize: { hubRelay: totalA, relayAgent: totalB },
        bytesTowardSiteWhenResultArrived: whenResultArrived,
        placedMs,
        crashedAtBytes: crashedAt,
      }),
    );
    // Placed within 40 s of world time: 12 s a link at 2 MB/s, the relay fetching the whole file before the
    // agent fetches it, plus the drops' 300 ms each, the crash and the 500 ms looks for what to fetch.
    expect(placedMs).toBeLessThanOrEqual(40_000);
    // The links really were dropped mid-transfer: at least 4 drops on the way (24 MB / 4 MB, less the
    // tail), each ending an exchange under way (a chunk in flight).
    expect(cutA.cuts()).toBeGreaterThanOrEqual(4);
    expect(cutB.cuts()).toBeGreaterThanOrEqual(4);
    expect(cutA.ended()).toBeGreaterThanOrEqual(cutA.cuts());
    expect(cutB.ended()).toBeGreaterThanOrEqual(cutB.cuts());
    // Resumed, not restarted: what a drop (or the crash) loses is the chunk in flight (a restart from zero
    // at each of 4+ drops would be 1.5 x or more). The process test allowed 1.1 for its machine's load;
    // the world's bytes do not hang on load, so 1.05 as the title says.
    expect(ratioA).toBeLessThanOrEqual(1.05);
    expect(ratioB).toBeLessThanOrEqual(1.05);
    expect(totalA).toBeLessThanOrEqual(1.05);
    expect(totalB).toBeLessThanOrEqual(1.05);

    // A kind the site does not accept is refused there and reported to the hub; nothing is fetched or run.
    const other = await world.api('/api/publications?site=ship-7&name=tool.sh&kind=image', {
      method: 'POST',
      body: '#!/bin/sh\ntouch pwned\n',
    });
    const refusedId = PublicationDetailSchema.parse(await other.json()).publicationId;
    const refused = await until('the hub to see the refusal', async () => {
      const r = await world.api(`/api/publications/${refusedId}`);
      const b = PublicationDetailSchema.parse(await r.json());
      return b.deliveries.find((d) => d.state === 'refused');
    });
    expect(refused.reason).toMatch(/kind 'image' is not accepted/);
    expect(existsSync(join(site, 'pwned'))).toBe(false);
    expect(readdirSync(join(site, 'mirror'))).toEqual(['aws-5.80.zip']);
  });
});
