import type { SiteContact } from '@driftline/protocol';
import { act, screen, waitFor, within } from '@testing-library/preact';
import { afterEach, describe, expect, it } from 'vitest';
import { HOUR, iso, MIN, smallWorld } from './support/fixtures.js';
import { MockHub } from './support/mockHub.js';
import { renderApp } from './support/renderApp.js';

let teardown = () => {};
afterEach(() => teardown());

/** polar-1 declares a 30 min pass every 4 h (01:00, 05:00, 09:00, 13:00 UTC); heard at 09:20, now 12:00. */
function polarWaiting(): MockHub {
  const hub = new MockHub(smallWorld());
  const contact: SiteContact = {
    source: 'declared',
    windows: ['every 4h for 30m from 2025-06-01T01:00:00Z'],
    confidence: null,
    judged: true,
    state: 'waiting',
    nextWindowAt: '2025-06-01T13:00:00.000Z',
    nextWindowEndsAt: '2025-06-01T13:30:00.000Z',
    lastWindowAt: '2025-06-01T09:00:00.000Z',
    lastWindowEndsAt: '2025-06-01T09:30:00.000Z',
    missedWindows: 0,
    graceS: 60,
    unreachableAfter: 3,
  };
  hub.sites = hub.sites.map((s) =>
    s.site === 'polar-1' ? { ...s, lastContactAt: iso(2 * HOUR + 40 * MIN), unreachable: false, contact } : s,
  );
  hub.cells = hub.cells.map((c) =>
    c.site === 'polar-1'
      ? {
          ...c,
          plannedAt: c.plannedAt ? iso(2 * HOUR + 45 * MIN) : null,
          expectedIntervalS: 600,
          siteUnreachable: false,
          stale: false,
          contact: 'waiting',
          nextWindowAt: contact.nextWindowAt,
        }
      : c,
  );
  return hub;
}

describe('expected silence is not an outage', () => {
  it('gives a site waiting for its window one neutral attention row, not one per cell', async () => {
    const r = renderApp(polarWaiting());
    teardown = r.teardown;
    const list = await screen.findByRole('list', { name: 'Silent sites' });
    const rows = within(list).getAllByRole('listitem');
    expect(rows.map((x) => x.textContent)).toEqual([
      expect.stringContaining('polar-1: 2 cells, waiting for window in 1 h'),
    ]);
    const attention = screen.getByRole('region', { name: /Needs attention/ });
    expect(within(attention).getAllByText(/polar-1/)).toHaveLength(1);
  });

  it('reads waiting in the links view and the matrix, and overdue once the next window passes without contact', async () => {
    const r = renderApp(polarWaiting(), '?view=links');
    teardown = r.teardown;
    const table = await screen.findByRole('table', { name: /Each site's link/ });
    const polar = within(table).getByRole('row', { name: /polar-1/ });
    expect(polar.textContent).toContain('waiting for window · next in 1 h');
    expect(polar.textContent).toContain('in 1 h · declared');
    // The expectation is the plan, not the agents' contact interval (issue 44).
    expect(polar.textContent).toContain('once in each window: every 4h for 30m from 2025-06-01T01:00:00Z');
    expect(polar.textContent).not.toContain('link down');
    // 13:00 opens, 13:30 closes, the grace ends 13:31: nothing came, so the browser judges it overdue.
    act(() => r.clock.advance(HOUR + 32 * MIN));
    await waitFor(() =>
      expect(within(table).getByRole('row', { name: /polar-1/ }).textContent).toContain(
        'overdue: 1 window passed without contact',
      ),
    );
  });

  it('marks the cells of a waiting site with the next window, not stale', async () => {
    const r = renderApp(polarWaiting(), '?view=matrix');
    teardown = r.teardown;
    const grid = await screen.findByRole('grid');
    await waitFor(() => expect(grid.textContent).toContain('waiting for window · next in 1 h'));
    const polar = screen.getAllByRole('gridcell').filter((c) => c.textContent?.includes('polar-1'));
    expect(polar.length).toBeGreaterThan(0);
    for (const c of polar) {
      expect(c.textContent).not.toContain('stale');
      expect(c.classList.contains('is-stale')).toBe(false);
    }
  });
});
