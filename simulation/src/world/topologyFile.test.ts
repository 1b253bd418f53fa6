import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runWorld } from './runWorld.js';
import { loadTopology, parseTopology } from './topologyFile.js';

const MIN = 60_000;
const HOUR = 60 * MIN;
const dir = mkdtempSync(join(tmpdir(), 'driftline-topology-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const file = (name: string, json: unknown) => {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(json));
  return path;
};

/**
 * `npm run sim -- --topology <file>` (docs/decisions/540-deterministic-world.md): a fleet described in a
 * file, run through the function the CLI uses (`loadTopology`, then `runWorld`), its ages and bytes read
 * off the report.
 */
describe('a topology file', () => {
  it("runs its sites on their own links and windows: the hub's ages bounded by each window's cadence, bytes on every link", async () => {
    const t = loadTopology(
      file('small.json', {
        description: 'one site always up, one in a window 30 min every 6 h',
        defaults: { agent: { components: 1, schedule: '*/30 * * * *' } },
        sites: [
          { name: 'base', link: { lightTimeMs: 1000 } },
          {
            name: 'outpost',
            link: {
              lightTimeMs: 2000,
              uplink: { bandwidthBps: 64_000 },
              whenDown: 'hang',
              contactWindows: ['every 6h for 30m from 2026-01-05T00:00:00Z'],
            },
          },
        ],
      }),
    );
    if (!t.ok) throw new Error(t.problems.join('\n'));
    const r = await runWorld({ seed: 3, sites: 0, days: 0.5, faults: [], topology: t.topology });
    expect(r.invariants.filter((i) => !i.held)).toEqual([]);
    expect(r.sites).toBe(2);
    expect(r.replay).toBe(`npm run sim -- --seed 3 --topology ${t.topology.file} --days 0.5`);
    const [base, outpost] = r.fleet.sites;
    expect(base?.site).toBe('base');
    expect(outpost?.site).toBe('outpost');
    // always up: never older than a plan's interval and a sync's round (30 s, two light times)
    expect(base?.ageMs?.max).toBeLessThanOrEqual(30 * MIN + 2 * MIN);
    // a window every 6 h: never older than the gap between windows, a plan's interval and a light time or two
    expect(outpost?.allCellsAtHubMs).toBeLessThan(30 * MIN);
    expect(outpost?.ageMs?.max).toBeGreaterThan(5 * HOUR);
    expect(outpost?.ageMs?.max).toBeLessThanOrEqual(6 * HOUR + 30 * MIN + 2 * MIN);
    expect(r.fleet.links.map((l) => l.link)).toEqual(['base>relay-1', 'outpost>relay-1', 'relay-1>hub']);
    for (const l of r.fleet.links) {
      expect(l.upPerDay, l.link).toBeGreaterThan(0);
      expect(l.downPerDay, l.link).toBeGreaterThan(0);
    }
  });

  it('is refused with each problem named by its field and what to do', () => {
    const bad = parseTopology({
      sites: [
        { name: 'ship-1', link: { lightTime: 280 } },
        { count: 2, link: { contactWindows: ['every 6h for 40m'] } },
      ],
    });
    expect(bad).toEqual({
      ok: false,
      problems: [
        "sites[0].link: unknown key 'lightTime': remove it or fix the spelling (known here: profile, lightTimeMs, uplink, downlink, resetsPerMin, whenDown, loss, contactWindows)",
        "sites[1].link.contactWindows[0]: 'every 6h for 40m' is not 'every … for … from …', '<cron> for …' or '<ISO time> for …' (each may end 'tz Europe/Berlin'); write 'every 4m for 40s from 2026-11-27T00:00:00Z', '0 2 * * * for 30m' (cron, UTC) or '2026-11-27T14:00:00Z for 8m', each optionally ending 'tz Europe/Berlin'",
        "sites[1].prefix: with 'count', give 'prefix' (sites are <prefix>-001, …)",
      ],
    });
    expect(loadTopology(file('broken.json', { sites: [{ name: 'a' }, { name: 'a' }], relays: [] }))).toEqual({
      ok: false,
      problems: [
        `${join(dir, 'broken.json')}: (the file): unknown key 'relays': remove it or fix the spelling (known here: description, windowsDeclaredAt, defaults, sites, relay)`,
      ],
    });
    expect(parseTopology({ sites: [{ name: 'a' }, { count: 1001, prefix: 'b' }] })).toMatchObject({
      ok: false,
      problems: ['sites[1].count: Too big: expected number to be <=1000'],
    });
    expect(
      parseTopology({ sites: [{ name: 'a' }, { name: 'a', agent: { sync: { intervalS: 0 } } }] }),
    ).toMatchObject({
      ok: false,
      problems: [expect.stringMatching(/^sites\[1\]\.agent\.sync\.intervalS: .*\(the agent's sync: keys/)],
    });
  });
});
