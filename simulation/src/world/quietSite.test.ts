import {
  type FleetResponse,
  type FleetSite,
  lastWindowOf,
  nextWindowOf,
  parseWindows,
} from '@driftline/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { World } from './World.js';

const MIN = 60_000;
const PERIOD_MS = 5 * MIN;
const WINDOW_MS = 1 * MIN;
const GRACE_S = 80;
const WINDOWS_WATCHED = 6;
/** How often the operator looks, virtual ms: the figures below are exact to this. */
const LOOK_MS = 1000;

/**
 * Issue 44's "done when" in the world (docs/decisions/540-deterministic-world.md), at its own scale (no
 * compression): one agent whose link is up 1 minute in every 5, declared as its contact plan, its plans
 * never changing after the first round, every `sync` timing at its default. With the link up in every
 * window the site is never overdue; once the relay is gone it is overdue after the first window that
 * passes without contact and its grace, to the second, not before.
 */
describe('a quiet site with a declared contact plan, in the world', () => {
  let world: World;
  const site = async (): Promise<FleetSite | undefined> =>
    (await world.hubApi<FleetResponse>('/api/fleet')).sites.find((s) => s.site === 'site-001');

  beforeAll(async () => {
    world = new World({
      seed: 44,
      sites: 1,
      components: 1,
      oneWayMs: 0,
      contact: { periodMs: PERIOD_MS, upMs: WINDOW_MS },
      // refused while down, as a dead radio is
      siteLink: { whenDown: 'refuse' },
      // planned once at start (planOnStart), then not until next New Year: nothing new to say
      schedule: '0 0 1 1 *',
      hub: { contactPlans: { graceS: GRACE_S, learnSilenceS: 200 } },
    });
    await world.start();
  });

  afterAll(async () => {
    await world?.close();
  });

  const lookUntil = <T>(what: string, f: () => Promise<T | false | undefined>, withinMs: number) =>
    world.lookUntil(what, f, withinMs, LOOK_MS);

  it('is never overdue through six windows with the link up, then overdue once the first missed one and its grace are over', async () => {
    const plan = await lookUntil(
      'site-001 to declare its window and deliver its first results',
      async () => {
        const s = await site();
        return s?.contact?.source === 'declared' && s.lastContactAt !== null && s;
      },
      4 * PERIOD_MS,
    );
    expect(plan.contact?.windows[0]).toMatch(/^every 5m for 1m from /);
    const specs = parseWindows(plan.contact?.windows ?? []);
    const first = nextWindowOf(specs, Date.now());
    if (!first) throw new Error('no next window');
    const watchEnd = first.start + WINDOWS_WATCHED * PERIOD_MS;
    const states = new Map<string, number>();
    const contacts = new Set<number>();
    while (Date.now() < watchEnd) {
      const s = await site();
      if (s?.contact) states.set(s.contact.state, (states.get(s.contact.state) ?? 0) + 1);
      if (s?.lastContactAt) contacts.add(Date.parse(s.lastContactAt));
      await world.run(10 * LOOK_MS);
    }
    expect(states.get('overdue') ?? 0).toBe(0);
    expect(states.get('unreachable') ?? 0).toBe(0);
    expect(states.get('waiting') ?? 0).toBeGreaterThan(0);
    // contact in every one of the six windows: the agent synced at each opening and said it was there
    const kept = new Set<number>();
    for (const t of contacts) {
      const w = lastWindowOf(specs, t);
      if (w && t >= first.start && t <= w.end + GRACE_S * 1000) kept.add(w.start);
    }
    expect(kept.size).toBeGreaterThanOrEqual(WINDOWS_WATCHED);

    // the relay goes away between windows: the agent's windows pass without contact from then on
    const open = lastWindowOf(specs, Date.now());
    if (open && open.end + 1000 > Date.now()) await world.run(open.end + 1000 - Date.now());
    await world.stopRelay();
    const missed = nextWindowOf(specs, Date.now());
    if (!missed) throw new Error('no next window');
    const overdue = await lookUntil(
      'site-001 to read overdue',
      async () => {
        const s = await site();
        return s?.contact?.state === 'overdue' && { at: Date.now(), s };
      },
      3 * PERIOD_MS,
    );
    // not before the first window it missed had ended with its grace, and within one look of it
    expect(overdue.at).toBeGreaterThanOrEqual(missed.end + GRACE_S * 1000);
    expect(overdue.at).toBeLessThanOrEqual(missed.end + GRACE_S * 1000 + LOOK_MS);
    expect(overdue.s.contact?.missedWindows).toBe(1);
  });
});
