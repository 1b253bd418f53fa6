import type { HubEvent, SiteSummary } from '@driftline/protocol';
import { describe, expect, it } from 'vitest';
import type { CellRow } from '../ports/HubStore.js';
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
      },
    },
    now: () => T,
    defaultContactIntervalS: null,
  });
  return { live, sent, reads: () => reads, asked };
}

describe('LiveEvents', () => {
  it('sends the cells of a commit, then the summaries of the sites it heard from, reading only those', async () => {
    const t = setup(true);
    await t.live.committed({
      cells: [cell],
      runs: [],
      sites: ['ship-7', 'polar-1'],
      planRequests: [],
      deliveries: [],
    });
    expect(t.sent.map((e) => (e.type === 'site-updated' ? `site ${e.site.site}` : e.type))).toEqual([
      'cell-updated',
      'site ship-7',
      'site polar-1',
    ]);
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
