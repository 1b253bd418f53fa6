import { describe, expect, it } from 'vitest';
import { type AttentionCell, groupAttention } from '../src/attentionGroups.js';

const NOW = Date.parse('2026-11-29T12:00:00Z');

/** The fleet of issue 44: 1,005 sites × 200 cells, 1,022 of them `failed: exit-1`, and the rest of a bad day. */
function fleet(): AttentionCell[] {
  const cells: AttentionCell[] = [];
  const site = (i: number) => `site-${String(i % 1005).padStart(4, '0')}`;
  for (let i = 0; i < 1022; i++) cells.push({ site: site(i), status: 'failed', reason: 'exit-1' });
  for (let i = 0; i < 3000; i++) cells.push({ site: site(i * 7), status: 'drift', reason: null });
  for (let i = 0; i < 1800; i++) cells.push({ site: site(i * 3), status: 'changes', reason: null });
  for (let i = 0; i < 900; i++) cells.push({ site: site(i * 11), status: 'stale', reason: null });
  for (let i = 0; i < 300; i++) cells.push({ site: site(i * 13), status: 'locked', reason: 'lock-timeout' });
  for (let i = 0; i < 24; i++) cells.push({ site: site(i), status: 'failed', reason: 'exit-2' });
  return cells;
}

describe('groupAttention', () => {
  it('lists a fleet of 1,005 sites and 7,046 cells needing a look in at most 30 rows, one per cause', () => {
    const cells = fleet();
    expect(cells.length).toBe(7046);
    const g = groupAttention(
      {
        relays: [{ name: 'relay-1', silentSince: NOW - 5 * 60_000, sitesBehind: ['site-0001', 'site-0002'] }],
        refused: [{ relay: 'relay-1', site: 'ship-8' }],
        overdue: [
          { site: 'site-0001', state: 'overdue', missedWindows: 1 },
          { site: 'polar-1', state: 'overdue', missedWindows: 2 },
        ],
        cells,
      },
      NOW,
    );
    expect(g.rows.length).toBeLessThanOrEqual(30);
    expect(g.more).toBe(0);
    expect(g.rows.map((r) => r.text)).toEqual([
      'relay-1 silent for 5 min: 2 sites behind it',
      'ship-8 refused at relay-1: its token does not act for the site',
      // site-0001 is behind the silent relay: that row says why, it is not listed again.
      'polar-1 overdue: 2 windows passed without contact',
      '3,000 cells drift at 1,005 sites',
      '1,800 cells changes at 335 sites',
      '1,022 cells failed: exit-1 at 1,005 sites',
      '900 cells stale at 900 sites',
      '300 cells locked: lock-timeout at 300 sites',
      '24 cells failed: exit-2 at 24 sites',
    ]);
    const failed = g.rows.find((r) => r.kind === 'cells' && r.reason === 'exit-1');
    expect(failed?.filter).toEqual({ view: 'matrix', status: 'failed', reason: 'exit-1' });
    expect(g.rows[0]?.filter).toEqual({ view: 'links', relay: 'relay-1' });
    expect(g.counts).toEqual({
      silentRelays: 1,
      refusedSites: 1,
      custodyUpstreams: 0,
      overdueSites: 1,
      cells: 7046,
    });
  });

  it('bounds the rows and counts the rest', () => {
    const cells = Array.from({ length: 50 }, (_, i) => ({
      site: 's',
      status: 'failed',
      reason: `exit-${i}`,
    }));
    const g = groupAttention({ relays: [], refused: [], overdue: [], cells }, NOW, 30);
    expect(g.rows.length).toBe(30);
    expect(g.more).toBe(20);
  });

  it('says when a relay never reported, and lists a refusal once', () => {
    const g = groupAttention(
      {
        relays: [{ name: 'ground-2', silentSince: null, sitesBehind: ['a'] }],
        refused: [
          { relay: 'r', site: 'x' },
          { relay: 'r', site: 'x' },
        ],
        overdue: [],
        cells: [],
      },
      NOW,
    );
    expect(g.rows.map((r) => r.text)).toEqual([
      'ground-2 never reported: 1 site behind it',
      'x refused at r: its token does not act for the site',
    ]);
  });

  it('counts an entry that stands for n cells as n, and one of none as nothing', () => {
    const g = groupAttention(
      {
        relays: [],
        refused: [],
        overdue: [],
        cells: [
          { site: 'a', status: 'drift', reason: null, n: 1000 },
          { site: 'b', status: 'drift', reason: null, n: 22 },
          { site: 'c', status: 'failed', reason: null, n: 0 },
        ],
      },
      NOW,
    );
    expect(g.rows.map((r) => r.text)).toEqual(['1,022 cells drift at 2 sites']);
    expect(g.counts.cells).toBe(1022);
  });
});
