import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { World } from './World.js';

const MIN = 60_000;

/** `driftline_hop_requests_total` of one route, answered `status`, from the hub's `/metrics`. */
function requests(metrics: string, route: string, status: number): number {
  const line = metrics
    .split('\n')
    .find(
      (l) =>
        l.startsWith('driftline_hop_requests_total{') &&
        l.includes(`route="${route}"`) &&
        l.includes(`status="${status}"`),
    );
  return line ? Number(line.split(' ').at(-1)) : 0;
}

/**
 * A relay's minute (docs/decisions/610-status-answers-who-you-are.md): its status goes to the hub every
 * minute and the hub's answer says who the relay is there, so it asks `GET /v1/peer` once, at start, not
 * every minute beside its status: one exchange a minute on the relay's upstream link, not two.
 */
describe("a relay's status and its look at who it is upstream, over half an hour", () => {
  let world: World;
  beforeAll(async () => {
    world = new World({ seed: 61, sites: 1, components: 1, schedule: '0 0 1 1 *' });
    await world.start();
  });
  afterAll(async () => {
    await world?.close();
  });

  it('sends its status each minute and asks who it is once', async () => {
    const before = (await world.hubCall('/metrics')).text;
    await world.run(30 * MIN);
    const after = (await world.hubCall('/metrics')).text;
    const statuses = requests(after, '/v1/status', 200) - requests(before, '/v1/status', 200);
    // the peering loop's rest is a minute, plus the time its own exchanges take
    expect(statuses).toBeGreaterThanOrEqual(29);
    expect(statuses).toBeLessThanOrEqual(30);
    expect(requests(after, '/v1/peer', 200)).toBe(1);
    expect(requests(after, '/v1/status', 204)).toBe(0);
  });
});
