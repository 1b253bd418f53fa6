import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type FleetResponse,
  type FleetSite,
  lastWindowOf,
  nextWindowOf,
  parseWindows,
} from '@driftline/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Topology } from '../src/topology/Topology.js';
import { until } from './support.js';

/**
 * Issue 44's "done when", as real processes: a hub, a relay and one agent whose link is up 1 minute in
 * every 5 (compressed ten times: 6 s of every 30 s), declared as its contact plan, its plans never
 * changing after the first round, every `sync` timing at its default (`backoffCapS` 900 s). With the link
 * up in every window the site is never overdue (its presence is contact, signed by the agent); once the
 * relay is stopped it is overdue after the first window that passes without contact, not before.
 */
const PERIOD_MS = 30_000;
const WINDOW_MS = 6000;
const GRACE_S = 8;
const WINDOWS_WATCHED = 6;

describe('a quiet site with a declared contact plan, as processes', { timeout: 600_000 }, () => {
  let topo: Topology;
  const api = <T>(path: string) =>
    fetch(`${topo.hubUrl}${path}`, { headers: topo.authHeaders }).then((r) => r.json() as Promise<T>);
  const site = async (): Promise<FleetSite | undefined> =>
    (await api<FleetResponse>('/api/fleet')).sites.find((s) => s.site === 'quiet-1');

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'driftline-quiet-'));
    topo = await Topology.start({
      dir,
      relayLink: { profile: 'lan', timeScale: 1 },
      sites: [
        {
          site: 'quiet-1',
          agent: 'a1',
          profile: 'lan',
          timeScale: 1,
          // Up 6 s of every 30 s from the link's start; refused while down, as a dead radio is.
          linkSettings: { schedule: { upMs: WINDOW_MS, periodMs: PERIOD_MS, offsetMs: 0 } },
          // Planned once at start (planOnStart), then not until next New Year: nothing new to say.
          components: [{ name: 'network', environments: ['prod'], schedule: '0 0 1 1 *' }],
        },
      ],
      // The agent's sync timings at their defaults: the operator of the issue declared windows and nothing else.
      agentSync: { intervalS: 30, backoffBaseS: 5, backoffCapS: 900 },
      hubContactPlans: { graceS: GRACE_S },
    });
  }, 180_000);

  afterAll(async () => {
    await topo?.stop();
  }, 120_000);

  it('is never overdue through six windows with the link up, then overdue after the first one missed', async () => {
    const plan = await until(
      'quiet-1 to declare its window and deliver its first results',
      async () => {
        const s = await site();
        return s?.contact?.source === 'declared' && s.lastContactAt !== null && s;
      },
      4 * PERIOD_MS,
      500,
    );
    expect(plan.contact?.windows[0]).toMatch(/^every 30s for 6s from /);
    const specs = parseWindows(plan.contact?.windows ?? []);
    // Watch from the next window's opening through six windows and their grace.
    const first = nextWindowOf(specs, Date.now());
    if (!first) throw new Error('no next window');
    const watchEnd = first.start + WINDOWS_WATCHED * PERIOD_MS;
    const states = new Map<string, number>();
    const contacts = new Set<number>();
    while (Date.now() < watchEnd) {
      const s = await site();
      if (s?.contact) states.set(s.contact.state, (states.get(s.contact.state) ?? 0) + 1);
      if (s?.lastContactAt) contacts.add(Date.parse(s.lastContactAt));
      await new Promise((r) => setTimeout(r, 1000));
    }
    expect(states.get('overdue') ?? 0).toBe(0);
    expect(states.get('unreachable') ?? 0).toBe(0);
    expect(states.get('waiting') ?? 0).toBeGreaterThan(0);
    // Contact in every one of the six windows: the agent synced at each opening and said it was there.
    const kept = new Set<number>();
    for (const t of contacts) {
      const w = lastWindowOf(specs, t);
      if (w && t >= first.start && t <= w.end + GRACE_S * 1000) kept.add(w.start);
    }
    expect(kept.size).toBeGreaterThanOrEqual(WINDOWS_WATCHED);

    // The relay goes away between windows (after the one open now has had its contact): the agent's
    // windows pass without contact from then on.
    const open = lastWindowOf(specs, Date.now());
    if (open && open.end + 1000 > Date.now())
      await new Promise((r) => setTimeout(r, open.end + 1000 - Date.now()));
    await topo.stopNode('relay');
    const stoppedAt = Date.now();
    const missed = nextWindowOf(specs, stoppedAt);
    if (!missed) throw new Error('no next window');
    const overdue = await until(
      'quiet-1 to read overdue',
      async () => {
        const s = await site();
        return s?.contact?.state === 'overdue' && { at: Date.now(), s };
      },
      3 * PERIOD_MS,
      500,
    );
    // Not before the first window it missed had ended, with its grace; and after that one, not a later one.
    expect(overdue.at).toBeGreaterThanOrEqual(missed.end + GRACE_S * 1000);
    expect(overdue.at).toBeLessThan(missed.end + GRACE_S * 1000 + PERIOD_MS);
    expect(overdue.s.contact?.missedWindows).toBe(1);
  });
});
