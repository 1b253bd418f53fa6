import {
  type FleetResponse,
  type FleetSite,
  lastWindowOf,
  nextWindowOf,
  parseWindows,
  type SiteDetail,
} from '@driftline/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { World } from './World.js';

const MIN = 60_000;
const HOUR = 60 * MIN;
const PERIOD_MS = 6 * HOUR;
const WINDOW_MS = 30 * MIN;
const GRACE_S = 120;
const WEEK_MS = 7 * 24 * HOUR;
/**
 * How often the operator looks during the week, virtual ms. A false alarm lasts from a window's end (and
 * grace) until the next window opens, 5 h 28 min here, so a look every 30 minutes sees every one; each look
 * is an `/api/fleet` read, and at every 5 minutes (2,016 of them) they were most of the test's time.
 */
const LOOK_MS = 30 * MIN;

/**
 * Issue 58 item 1, windows declared once (docs/decisions/590-windows-declared-once.md): a quiet site whose
 * window (30 minutes every 6 hours, a satellite pass) is declared only at the hub (`contactPlans.sites`),
 * nothing at the agent. The hub says the windows wait for the agent until it holds them, sends them down
 * signed; the agent aims at them and says it is there in each; through a simulated week the site never
 * reads overdue or unreachable, and once its relay is gone it reads overdue after the first missed window.
 */
describe('a quiet site whose windows are declared only at the hub, over a simulated week', () => {
  let world: World;
  const site = async (): Promise<FleetSite | undefined> =>
    (await world.hubApi<FleetResponse>('/api/fleet')).sites.find((s) => s.site === 'site-001');

  beforeAll(async () => {
    world = new World({
      seed: 58,
      sites: 1,
      components: 1,
      oneWayMs: MIN,
      contact: { periodMs: PERIOD_MS, upMs: WINDOW_MS },
      windowsDeclaredAt: 'hub',
      siteLink: { whenDown: 'refuse' },
      // planned once at start, then not until next New Year: nothing new to say all week
      schedule: '0 0 1 1 *',
      // a sweep a minute (default 15 s): a week of sweeps is most of the world's work here
      hub: { contactPlans: { graceS: GRACE_S }, sweepIntervalS: 60 },
    });
    await world.start();
  });

  afterAll(async () => {
    await world?.close();
  });

  it('is judged by them only once the agent holds them, is never overdue in a week, and is overdue once it misses one', async () => {
    // Before the agent holds them: shown as waiting for it, not judged.
    const first = await site();
    const declared = first?.contact?.unconfirmed ?? [];
    expect(declared).toHaveLength(1);
    expect(first?.contact).toMatchObject({ judged: false });
    expect(declared[0]).toMatch(/^every 360m for 30m from /);
    const specs = parseWindows(declared);

    // The first window: the control goes down, the agent says it holds them and is judged by them.
    const held = await world.lookUntil(
      'the agent to hold the hub-declared window and the hub to judge by it',
      async () => {
        const s = await site();
        return s?.contact?.judged === true && s.contact.unconfirmed === undefined && s;
      },
      PERIOD_MS + WINDOW_MS,
      MIN,
    );
    expect(held.contact).toMatchObject({ source: 'declared', windows: declared });
    const view = await world.hubApi<SiteDetail>('/api/sites/site-001');
    expect(view.agents[0]?.hubWindows).toEqual(declared);

    // A week, looked at every 5 minutes.
    const start = nextWindowOf(specs, Date.now());
    if (!start) throw new Error('no next window');
    const end = start.start + WEEK_MS;
    const states = new Map<string, number>();
    const contacts = new Set<number>();
    await world.run(start.start - Date.now());
    while (Date.now() < end) {
      const s = await site();
      if (s?.contact) states.set(s.contact.state, (states.get(s.contact.state) ?? 0) + 1);
      if (s?.lastContactAt) contacts.add(Date.parse(s.lastContactAt));
      await world.run(LOOK_MS);
    }
    expect(states.get('overdue') ?? 0).toBe(0);
    expect(states.get('unreachable') ?? 0).toBe(0);
    expect(states.get('unplanned') ?? 0).toBe(0);
    expect(states.get('in-window') ?? 0).toBeGreaterThan(0);
    // contact in each of the week's 28 windows: the agent synced at each opening and said it was there
    const kept = new Set<number>();
    for (const t of contacts) {
      const w = lastWindowOf(specs, t);
      if (w && t >= start.start && t <= w.end + GRACE_S * 1000) kept.add(w.start);
    }
    expect(kept.size).toBeGreaterThanOrEqual(WEEK_MS / PERIOD_MS - 1);

    // The relay goes away between windows: the next window passes without contact.
    const open = lastWindowOf(specs, Date.now());
    if (open && open.end + 1000 > Date.now()) await world.run(open.end + 1000 - Date.now());
    await world.stopRelay();
    const missed = nextWindowOf(specs, Date.now());
    if (!missed) throw new Error('no next window');
    const overdue = await world.lookUntil(
      'site-001 to read overdue',
      async () => {
        const s = await site();
        return s?.contact?.state === 'overdue' && { at: Date.now(), s };
      },
      2 * PERIOD_MS,
      MIN,
    );
    expect(overdue.at).toBeGreaterThanOrEqual(missed.end + GRACE_S * 1000);
    expect(overdue.at).toBeLessThanOrEqual(missed.end + GRACE_S * 1000 + MIN);
    expect(overdue.s.contact?.missedWindows).toBe(1);
  });
});
