import type { HubEvent, SiteSummary } from '@driftline/protocol';
import { describe, expect, it } from 'vitest';
import type { CellRow, RunRow } from '../ports/HubStore.js';
import { LiveEvents } from './liveEvents.js';

const T = Date.parse('2026-11-01T10:00:00Z');
const site = (name: string) => ({ site: name }) as SiteSummary;
const cell: CellRow = {
  site: 'ship-7',
  environment: 'prod',
  component: 'network',
  agent: 'a1',
  status: 'clean',
  counts: null,
  reason: null,
  runId: '01JD0000000000000000000001',
  plannedAt: T - 1000,
  receivedAt: T,
  expectedIntervalS: 3600,
  planHash: null,
  staleNotifiedFor: null,
};

function setup(listening: boolean) {
  const sent: HubEvent[] = [];
  let reads = 0;
  const asked: string[][] = [];
  const live = new LiveEvents({
    publish: (e) => sent.push(e),
    listening: () => listening,
    queries: {
      fleet: {
        siteSummaries: async (names: readonly string[]) => {
          reads++;
          asked.push([...names]);
          return names.map(site);
        },
        totals: async () => ({ cells: 3, statusCounts: { clean: 3 }, stale: 0 }),
      },
    },
    now: () => T,
    defaultContactIntervalS: null,
  });
  return { live, sent, reads: () => reads, asked };
}

describe('LiveEvents', () => {
  it('sends the cells that changed, one fleet-moved for the batch, then the summaries of the sites it heard from', async () => {
    const t = setup(true);
    const run = (runId: string, unchanged: boolean) =>
      ({
        ...cell,
        runId,
        unchanged,
        agent: 'a1',
        summary: {},
        detailBlob: null,
        docId: 'd',
      }) as unknown as RunRow;
    const confirmed = { ...cell, site: 'polar-1', runId: '01JD0000000000000000000002' };
    await t.live.committed({
      cells: [cell, confirmed],
      runs: [run(cell.runId, false), run(confirmed.runId, true)],
      sites: ['ship-7', 'polar-1'],
      planRequests: [],
      deliveries: [],
    });
    // The unchanged confirmation moves ages, not cells: no cell-updated nor run-added for it.
    expect(t.sent.map((e) => (e.type === 'site-updated' ? `site ${e.site.site}` : e.type))).toEqual([
      'run-added',
      'cell-updated',
      'fleet-moved',
      'site ship-7',
      'site polar-1',
    ]);
    expect(t.sent.find((e) => e.type === 'fleet-moved')).toMatchObject({
      sites: ['polar-1', 'ship-7'],
      moreSites: false,
      changed: 1,
      confirmed: 1,
      totals: { cells: 3 },
    });
    expect(t.reads()).toBe(1);
    expect(t.asked).toEqual([['ship-7', 'polar-1']]);
  });

  it('reads no site summaries when no dashboard listens, and still sends the cells', async () => {
    const t = setup(false);
    await t.live.swept({ expired: [], staleCells: [cell], unreachableSites: ['ship-9'] });
    expect(t.sent.map((e) => e.type)).toEqual(['cell-updated']);
    expect(t.reads()).toBe(0);
  });
});
