import { summariseFleet } from '@driftline/protocol';
import { describe, expect, it } from 'vitest';
import { cell, counts, HOUR, iso, NOW, runItem, smallWorld } from '../../test/support/fixtures.js';
import { CellStore } from './cellStore.js';
import { driftEpisodes, timeline } from './episodes.js';
import { linkSentence, nextWindow } from './link.js';
import { belongsToView, layoutMatrix } from './matrix.js';
import { NO_FILTERS } from './route.js';
import { tileAge, tileText } from './tile.js';

describe('dense matrix layout', () => {
  it('puts one row per component and groups the columns by environment, then site', () => {
    const l = layoutMatrix(new CellStore(smallWorld().cells), NO_FILTERS, null, NOW);
    expect(l.rows.map((r) => r.label)).toEqual(['compute', 'dns', 'network']);
    expect(l.columns.map((c) => `${c.environment}@${c.site}`)).toEqual([
      'prod@lab',
      'prod@polar-1',
      'prod@ship-7',
      'staging@lab',
      'staging@polar-1',
      'staging@ship-7',
    ]);
    expect(l.groups).toEqual([
      { environment: 'prod', start: 0, count: 3 },
      { environment: 'staging', start: 3, count: 3 },
    ]);
  });

  it('pivots to one row per site and one column per environment', () => {
    const l = layoutMatrix(new CellStore(smallWorld().cells), NO_FILTERS, 'network', NOW);
    expect(l.rows.map((r) => r.label)).toEqual(['polar-1', 'ship-7']);
    expect(l.columns).toEqual([
      { environment: 'prod', site: null },
      { environment: 'staging', site: null },
    ]);
  });

  it('keeps only the rows and columns of cells that pass the filters', () => {
    const l = layoutMatrix(new CellStore(smallWorld().cells), { ...NO_FILTERS, status: 'failed' }, null, NOW);
    expect(l.rows.map((r) => r.label)).toEqual(['compute']);
    expect(l.columns).toEqual([{ environment: 'staging', site: 'ship-7' }]);
    expect(l.cellCount).toBe(1);
  });

  it('takes live cells of the view’s ref only', () => {
    const store = new CellStore([cell({ site: 's', environment: 'e', component: 'c', ref: 'main' })]);
    const pr = cell({ site: 's', environment: 'e', component: 'c', ref: 'pr/42' });
    expect(belongsToView(pr, null, store)).toBe(false);
    expect(belongsToView(pr, 'pr/42', store)).toBe(true);
    expect(
      belongsToView(cell({ site: 's', environment: 'e', component: 'c', ref: 'main' }), null, store),
    ).toBe(true);
    expect(belongsToView(cell({ site: 'n', environment: 'e', component: 'c' }), null, store)).toBe(true);
  });

  it('says a tile’s status in a few characters and its age in one unit', () => {
    expect(tileText('changes', counts({ add: 2, change: 1, destroy: 3 }))).toBe('+2~1-3');
    expect(tileText('changes', counts({ import: 1 }))).toBe('⇣1');
    expect(tileText('changes', counts({ change: 1, import: 2 }))).toBe('+0~1-0⇣2');
    expect(tileText('drift', counts({ drift: 4 }))).toBe('drift 4');
    expect(tileText('blocked', null)).toBe('blocked');
    expect(tileAge(iso(3 * HOUR), NOW)).toBe('3 h');
    expect(tileAge(null, NOW)).toBe('');
  });
});

describe('fleet summary', () => {
  it('counts per site and environment and lists failures before stuck locks, drift, stale and blocked', () => {
    const { cells, sites } = smallWorld();
    cells.push(
      cell({ site: 'lab', environment: 'prod', component: 'vpn', status: 'failed', reason: 'stuck-lock' }),
      cell({ site: 'lab', environment: 'prod', component: 'iam', status: 'blocked', needs: ['aws 5.31.0'] }),
    );
    const f = summariseFleet(cells, sites, new Date(NOW).toISOString());
    expect(f.totals).toMatchObject({ cells: 10, sites: 3, unreachableSites: 1, unreachableCells: 2 });
    expect(f.attention.map((a) => `${a.kind}:${a.site}/${a.environment}/${a.component}`)).toEqual([
      'failed:lab/staging/dns',
      'failed:ship-7/staging/compute',
      'stuck-lock:lab/prod/dns',
      'stuck-lock:lab/prod/vpn',
      'drift:ship-7/staging/network',
      'blocked:lab/prod/iam',
    ]);
    // The unreachable site's stale cell is counted, and listed once as the site's row, not per cell.
    expect(f.attentionCounts.stale).toBe(1);
    expect(f.silentSites).toEqual([
      expect.objectContaining({ site: 'polar-1', cells: 2, state: 'unreachable' }),
    ]);
    expect(f.environments.map((e) => [e.environment, e.cells, e.unreachable])).toEqual([
      ['prod', 6, 1],
      ['staging', 4, 1],
    ]);
    const polar = f.sites.find((s) => s.site === 'polar-1')!;
    expect(polar.link).toBe('link-down');
    expect(linkSentence(polar, NOW)).toBe('link down since 3 d ago');
  });
});

describe('cell history', () => {
  const key = { site: 's', environment: 'e', component: 'c' };
  it('finds drift episodes with first seen, last seen and when they were resolved', () => {
    const runs = [
      runItem({ n: 9, ...key, status: 'clean' }),
      runItem({ n: 8, ...key, status: 'drift', counts: counts({ drift: 1 }) }),
      runItem({ n: 7, ...key, status: 'failed', counts: null, reason: 'timeout' }),
      runItem({ n: 6, ...key, status: 'changes', counts: counts({ add: 1, drift: 3 }) }),
      runItem({ n: 5, ...key, status: 'clean' }),
      runItem({ n: 2, ...key, status: 'drift', counts: counts({ drift: 2 }) }),
    ];
    expect(driftEpisodes(runs)).toEqual([
      expect.objectContaining({ firstSeen: iso(2 * HOUR), lastSeen: iso(2 * HOUR), resolvedAt: null }),
      expect.objectContaining({
        firstSeen: iso(8 * HOUR),
        lastSeen: iso(6 * HOUR),
        resolvedAt: iso(5 * HOUR),
        runs: 2,
        maxDrift: 3,
      }),
    ]);
    expect(timeline(runs, 3).map((r) => r.plannedAt)).toEqual([iso(6 * HOUR), iso(5 * HOUR), iso(2 * HOUR)]);
  });

  it('finds the next declared contact window and leaves free text alone', () => {
    const from = Date.parse('2025-06-01T12:00:30.000Z'); // a Sunday
    const next = (w: string[]) => {
      const t = nextWindow(w, from);
      return t === null ? null : new Date(t).toISOString();
    };
    expect(next(['*/15 * * * *'])).toBe('2025-06-01T12:15:00.000Z');
    expect(next(['30 2 * * 1 for 30m'])).toBe('2025-06-02T02:30:00.000Z');
    expect(next(['0 0 1 7 *', 'every 4h for 10m from 2025-06-01T00:00:00Z'])).toBe(
      '2025-06-01T16:00:00.000Z',
    );
    expect(next(['0 6 1 * 1'])).toBe('2025-06-02T06:00:00.000Z'); // a Monday: day-of-month OR day-of-week
    expect(next(['every pass of the satellite', '61 * * * *'])).toBeNull();
  });
});
