import { describe, expect, it } from 'vitest';
import { type AttentionCustody, groupCustody } from '../src/attentionCustody.js';
import { groupAttention } from '../src/attentionGroups.js';

const NOW = Date.parse('2026-12-02T12:00:00Z');
const MIN = 60_000;

const held = (
  upstream: string,
  site: string,
  results: number,
  oldestMinAgo: number,
  relay: string | null = null,
  agent = 'a1',
): AttentionCustody => ({ upstream, relay, site, agent, results, oldestAt: NOW - oldestMinAgo * MIN });

describe('upstreams sitting on custody in the grouped attention (issue 59)', () => {
  it('is one row per upstream, results summed, the oldest kept, its sites named, most results first', () => {
    const rows = groupCustody(
      [
        held('relay-2', 'ship-1', 13, 14, 'relay-2'),
        held('http://10.0.0.9:7000', 'mine-3', 1, 3),
        held('relay-2', 'ship-1', 2, 20, 'relay-2', 'a2'),
        held('relay-2', 'lab', 5, 6, 'relay-2'),
        held('http://10.0.0.9:7000', 'polar-1', 0, 50),
      ],
      NOW,
    );
    expect(rows.map((r) => r.text)).toEqual([
      'relay-2 holds 20 results past their deadline, oldest 20 min (sites lab, ship-1)',
      'http://10.0.0.9:7000 holds 1 result past its deadline, oldest 3 min (site mine-3)',
    ]);
    expect(rows[0]).toMatchObject({
      kind: 'custody-overdue',
      upstream: 'relay-2',
      relay: 'relay-2',
      results: 20,
      oldestAt: NOW - 20 * MIN,
      sites: 2,
      agents: 3,
      siteNames: ['lab', 'ship-1'],
      filter: { view: 'links', relay: 'relay-2' },
    });
  });

  it('names three sites and counts the rest', () => {
    const [row] = groupCustody(
      ['e', 'd', 'c', 'b', 'a'].map((s) => held('relay-9', s, 1, 2, 'relay-9')),
      NOW,
    );
    expect(row?.text).toBe(
      'relay-9 holds 5 results past their deadline, oldest 2 min (sites a, b, c and 2 more)',
    );
    expect(row?.siteNames).toEqual(['a', 'b', 'c']);
  });

  it('stands after the relays and refusals, before overdue sites and cells, and is counted', () => {
    const g = groupAttention(
      {
        relays: [{ name: 'relay-1', silentSince: NOW - 5 * MIN, sitesBehind: ['x'] }],
        refused: [{ relay: 'relay-1', site: 'y' }],
        overdue: [{ site: 'polar-1', state: 'overdue', missedWindows: 2 }],
        cells: [{ site: 'z', status: 'drift', reason: null }],
        custody: [held('relay-2', 'ship-1', 13, 14, 'relay-2')],
      },
      NOW,
    );
    expect(g.rows.map((r) => r.kind)).toEqual([
      'silent-relay',
      'refused-site',
      'custody-overdue',
      'overdue-site',
      'cells',
    ]);
    expect(g.counts.custodyUpstreams).toBe(1);
  });
});
