import { afterEach, describe, expect, it } from 'vitest';
import { HostileFaults, hostileInvariants } from './hostileFaults.js';
import { VirtualTime } from './VirtualTime.js';
import { WORLD_START, World } from './World.js';
import { WorldLink } from './WorldLink.js';

const MIN = 60_000;
const HOUR = 60 * MIN;

/**
 * The `hostile` fault (docs/decisions/540-deterministic-world.md): relay-1 lies to the sites in episodes, one
 * lie of the hostile suite at a time, honest between them. Here the links stay up (no contact windows), so
 * every lie meets traffic within its episode: two sites, one on hop v2 and one on v1, four and a half hours of lies
 * of 30 to 45 minutes each, 5 to 15 minutes apart.
 */
async function hostileWorld(seed: number) {
  // room for the five lies when one waits for its traffic (an episode is extended until its lie touches
  // something: a detail upload comes with the hourly plans)
  const days = 4.5 * HOUR;
  const hostile = new HostileFaults(seed, 2, days, {
    episodeMs: { min: 30 * MIN, max: 45 * MIN },
    honestMs: { min: 5 * MIN, max: 15 * MIN },
  });
  const world = new World({ seed, sites: 2, contact: null, ...hostile.spec() });
  try {
    await world.start();
    hostile.schedule(world);
    await world.run(days);
    const end = Date.now();
    const drained = await world.until(() => world.ledger.figures(end).lost === 0, 12 * HOUR);
    const details = await hostile.drain(world, end, 12 * HOUR);
    const figures = world.ledger.figures(end);
    return {
      drained,
      details,
      figures,
      episodes: hostile.episodes,
      invariants: await hostileInvariants(hostile, world, end, figures.lost),
    };
  } finally {
    await world.close();
  }
}

describe('a world whose relay lies', () => {
  it('has every lie touch something, refuses what it forged, and loses and makes up nothing', async () => {
    const one = await hostileWorld(3);
    // every lie that fits two sites of different wires (a swap needs two of one)
    expect([...new Set(one.episodes.map((e) => e.lie))].sort()).toEqual([
      'altered downlink',
      'fake receipts',
      'fake tus completion',
      'flipped bytes',
      'silent drops',
    ]);
    for (const e of one.episodes)
      expect(
        Object.values(e.did).some((n) => n > 0),
        JSON.stringify(one.episodes),
      ).toBe(true);
    // the refusals the lies met: flipped uploads and v2 pushes refused by relay-1, altered acks by the agents
    const flipped = one.episodes.find((e) => e.lie === 'flipped bytes');
    expect(Object.keys(flipped?.forwarded ?? {}).some((s) => Number(s) >= 400)).toBe(true);
    const altered = one.episodes.find((e) => e.lie === 'altered downlink');
    expect(Object.keys(altered?.refusals ?? {}).some((m) => /not signed by the pinned hub key/.test(m))).toBe(
      true,
    );
    const faked = one.episodes.find((e) => e.lie === 'fake tus completion');
    expect(faked?.fakedBlobs.length).toBeGreaterThan(0);
    expect(one.invariants.filter((i) => !i.held)).toEqual([]);
    expect(one.drained).toBe(true);
    expect(one.details).toBe(true);
    expect(one.figures.recorded).toBeGreaterThan(0);
    expect(one.figures).toMatchObject({ lost: 0, unknown: 0 });
  });
});

describe('the hostile episodes against contact windows', () => {
  const time = new VirtualTime();
  afterEach(() => time.uninstall());

  /** Episodes over two sites' links only (windows of 2 h in 6 h), nothing sent: when each begins. */
  async function episodesOver(offsetsMs: number[], daysMs: number) {
    time.install(WORLD_START);
    const sites = offsetsMs.map((offsetMs, i) => ({
      link: new WorldLink(
        `site-00${i + 1}>relay-1`,
        { schedule: { upMs: 2 * HOUR, periodMs: 6 * HOUR, offsetMs } },
        WORLD_START,
      ),
    }));
    const hostile = new HostileFaults(7, sites.length, daysMs, {
      episodeMs: { min: 2 * HOUR, max: 2 * HOUR },
      honestMs: { min: 90 * MIN, max: 90 * MIN },
    });
    hostile.schedule({ sites, hubCommits: new Set() } as unknown as World);
    await time.run(daysMs);
    return hostile.episodes;
  }

  it('begins a lie where a site is in contact for an hour, not in a gap between windows', async () => {
    // at 1:30 site-001's window (0:00–2:00) has half an hour left and site-002's (3:00–5:00) is still to come
    const episodes = await episodesOver([0, 3 * HOUR], 12 * HOUR);
    expect(episodes.map((e) => e.from)).toEqual([3 * HOUR]);
  });

  it('tells no lie whose shortest length no longer fits in the days once a site is in contact', async () => {
    expect(await episodesOver([0, 3 * HOUR], 4 * HOUR + 30 * MIN)).toEqual([]);
  });
});
