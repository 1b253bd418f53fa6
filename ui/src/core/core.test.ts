import { describe, expect, it } from 'vitest';
import { cell, counts, HOUR, iso, MIN, NOW } from '../../test/support/fixtures.js';
import { CellStore } from './cellStore.js';
import { moveInGrid } from './gridNav.js';
import { formatRoute, NO_FILTERS, parseRoute, type Route } from './route.js';
import { SseParser } from './sseParser.js';
import { countsText, statusText } from './status.js';
import { formatAgo, formatLag, formatOffset } from './time.js';

describe('time', () => {
  it('speaks in the largest whole unit', () => {
    expect(formatAgo(iso(3 * HOUR + 59 * MIN), NOW)).toBe('3 h ago');
    expect(formatAgo(iso(45_000), NOW)).toBe('45 s ago');
    expect(formatAgo(iso(2000), NOW)).toBe('just now');
    expect(formatAgo(iso(-2 * MIN), NOW)).toBe('in 2 min');
    expect(formatLag(iso(50 * MIN), iso(10 * MIN))).toBe('arrived 40 min later');
    expect(formatOffset(-90_000)).toBe('1 min behind');
    expect(formatOffset(null)).toBe('unknown');
  });
});

describe('status', () => {
  it("shows Terraform's numbers as they are, replacements apart", () => {
    expect(countsText(counts({ add: 4, change: 2, destroy: 3, replace: 3 }))).toBe('+4 ~2 -3 (3 replaced)');
    expect(statusText('failed', null, 'exit-1')).toBe('failed: exit-1');
    expect(statusText('no-data', null)).toBe('no data');
  });
});

describe('route', () => {
  const routes: Route[] = [
    { view: 'matrix', filters: NO_FILTERS, pivot: null },
    {
      view: 'matrix',
      pivot: 'network',
      filters: {
        site: 'ship-7',
        environment: 'prod',
        q: 'net',
        status: 'drift',
        staleOnly: true,
        at: iso(HOUR),
        ref: 'pr/42',
      },
    },
    { view: 'matrix', filters: { ...NO_FILTERS, ref: 'pr/42' }, pivot: null },
    { view: 'overview' },
    { view: 'links' },
    { view: 'needs' },
    { view: 'site', site: 'polar-1' },
    { view: 'cell', site: 'a', environment: 'b c', component: 'd/e', status: 'failed' },
    { view: 'cell', site: 'a', environment: 'b', component: 'c', status: null, ref: 'pr/7' },
    { view: 'run', runId: '01J0000000000000000000000A' },
    { view: 'audit' },
  ];
  it.each(routes)('reads back what it writes: %o', (r) => {
    expect(parseRoute(formatRoute(r))).toEqual(r);
  });
  it('ignores malformed parameters instead of failing', () => {
    expect(parseRoute('?status=bogus&at=yesterday&stale=yes')).toEqual({
      view: 'matrix',
      filters: NO_FILTERS,
      pivot: null,
    });
    expect(parseRoute('?view=site').view).toBe('matrix');
  });
});

describe('SseParser', () => {
  it('joins data lines, keeps the last id, and survives chunks split anywhere', () => {
    const text =
      'retry: 5000\n: comment\nid: 7\nevent: cell-updated\ndata: {"a":\ndata: 1}\n\ndata: x\r\n\r\n';
    for (let cut = 0; cut < text.length; cut++) {
      const p = new SseParser();
      const out = [...p.push(text.slice(0, cut)), ...p.push(text.slice(cut))];
      expect(out).toEqual([
        { event: 'cell-updated', data: '{"a":\n1}', id: '7' },
        { event: 'message', data: 'x', id: '7' },
      ]);
      expect(p.retryMs).toBe(5000);
    }
  });
});

describe('gridNav', () => {
  const heading = (r: number) => r === 0 || r === 3;
  it('skips site headings in data columns and lands on them in the heading column', () => {
    expect(moveInGrid({ row: 2, col: 2 }, 'ArrowDown', false, 6, 3, heading, 2)).toEqual({ row: 4, col: 2 });
    expect(moveInGrid({ row: 2, col: 0 }, 'ArrowDown', false, 6, 3, heading, 2)).toEqual({ row: 3, col: 0 });
    expect(moveInGrid({ row: 1, col: 1 }, 'ArrowUp', false, 6, 3, heading, 2)).toEqual({ row: 0, col: 0 });
    expect(moveInGrid({ row: 1, col: 3 }, 'ArrowRight', false, 6, 3, heading, 2)).toEqual({ row: 1, col: 3 });
    expect(moveInGrid({ row: 1, col: 1 }, 'End', true, 6, 3, heading, 2)).toEqual({ row: 5, col: 3 });
    expect(moveInGrid({ row: 1, col: 1 }, 'x', false, 6, 3, heading, 2)).toBeNull();
  });
});

describe('CellStore', () => {
  it('keeps the newer fact when an event older than the fetched matrix arrives', () => {
    const key = { site: 's', environment: 'e', component: 'c' };
    const store = new CellStore([cell({ ...key, status: 'drift', receivedAt: iso(MIN) })]);
    expect(store.upsert(cell({ ...key, status: 'clean', receivedAt: iso(HOUR) }))).toBe('older');
    expect(store.get('s', 'e', 'c')?.status).toBe('drift');
    expect(store.upsert(cell({ ...key, status: 'failed', receivedAt: iso(0) }))).toBe('updated');
    expect(store.upsert(cell({ ...key, component: 'd' }))).toBe('added');
    expect(store.layoutVersion).toBe(1);
  });
});
