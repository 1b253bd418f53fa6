import { groupAttention } from '@driftline/protocol';
import { screen, waitFor, within } from '@testing-library/preact';
import { afterEach, describe, expect, it } from 'vitest';
import { MIN, NOW, smallWorld } from './support/fixtures.js';
import { MockHub } from './support/mockHub.js';
import { renderApp } from './support/renderApp.js';

/**
 * Issue 59: an upstream that sat on a site's results past their deadline is named in the overview's
 * "Needs attention" and under the Links table, as `/api/fleet`'s grouped attention names it
 * (docs/decisions/575-custody-deadline-per-path.md).
 */

let teardown = () => {};
afterEach(() => teardown());

const LINE = 'relay-2 holds 13 results past their deadline, oldest 14 min (site ship-7)';

function hubWithSitter() {
  const hub = new MockHub(smallWorld());
  hub.attentionGroups = groupAttention(
    {
      relays: [],
      refused: [],
      overdue: [],
      cells: [],
      custody: [
        {
          upstream: 'relay-2',
          relay: 'relay-2',
          site: 'ship-7',
          agent: 'a1',
          results: 13,
          oldestAt: NOW - 14 * MIN,
        },
      ],
    },
    NOW,
  );
  return hub;
}

describe('an upstream sitting on custody in the dashboard', () => {
  it("is a row of the overview's attention, counted with the relay problems", async () => {
    const hub = hubWithSitter();
    const r = renderApp(hub);
    teardown = r.teardown;
    const attention = await screen.findByRole('region', { name: /Needs attention/ });
    const row = await within(attention).findByRole('link', { name: LINE });
    expect(row.closest('li')?.textContent).toContain('custody overdue');
    expect(within(attention).getByRole('heading').textContent).toContain('1 upstream sitting on results');
    await screen.findByRole('link', { name: /1 relay problems/ });
  });

  it('is a line under the Links table', async () => {
    const hub = hubWithSitter();
    const r = renderApp(hub, '?view=links');
    teardown = r.teardown;
    await screen.findByRole('table', { name: /Each site's link/ });
    const list = await screen.findByRole('list', { name: /Upstreams sitting on results/ });
    expect(
      within(list)
        .getAllByRole('listitem')
        .map((li) => li.textContent),
    ).toEqual([LINE]);
    // every load of the view answered before the test ends
    await waitFor(() => expect(hub.requests.map((q) => q.path)).toContain('GET /api/publications'));
  });
});
