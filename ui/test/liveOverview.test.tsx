import { groupAttention, type HubEvent } from '@driftline/protocol';
import { act, screen, waitFor, within } from '@testing-library/preact';
import { afterEach, describe, expect, it } from 'vitest';
import { iso, MIN, NOW, smallWorld } from './support/fixtures.js';
import { MockHub } from './support/mockHub.js';
import { renderApp } from './support/renderApp.js';

/**
 * Issue 58 item 3, "live is live": an open overview shows what time alone changed at the hub (a relay
 * gone silent) from the event the sweep sends, and a page that falls behind says so and reads again.
 */

let teardown = () => {};
afterEach(() => teardown());

const quiet = (relays: string[] = [], withinS = 75): HubEvent => ({
  type: 'fleet-judged',
  at: iso(0),
  sites: [],
  moreSites: false,
  relays,
  withinS,
});

async function openOverview(hub: MockHub) {
  const r = renderApp(hub);
  teardown = r.teardown;
  await screen.findByRole('heading', { name: /Needs attention/ });
  await waitFor(() => expect(hub.openStreams).toBe(1));
  const reads = () => hub.requests.filter((q) => q.path === 'GET /api/fleet').length;
  return { ...r, reads };
}

function hubWithRelays() {
  const hub = new MockHub(smallWorld());
  hub.attentionGroups = groupAttention({ relays: [], refused: [], overdue: [], cells: [] }, NOW);
  return hub;
}

describe('the open overview follows what time changes at the hub', () => {
  it('shows a relay that went silent as soon as the hub’s sweep says so, without a reload', async () => {
    const hub = hubWithRelays();
    const r = await openOverview(hub);
    const attention = screen.getByRole('region', { name: /Needs attention/ });
    expect(attention.textContent).toContain('every relay reports');
    expect(r.reads()).toBe(1);

    // The relay's last status is now 6 minutes old: the hub's sweep judges it silent.
    hub.attentionGroups = groupAttention(
      {
        relays: [{ name: 'relay-dmz', silentSince: NOW - 6 * MIN, sitesBehind: ['ship-7'] }],
        refused: [],
        overdue: [],
        cells: [],
      },
      NOW,
    );
    act(() => hub.emit(quiet(['relay-dmz'])));
    // No clock moves: the page reads again on the event itself.
    await within(attention).findByText(/relay-dmz silent for 6 min: 1 site behind it/);
    expect(within(attention).getByRole('heading').textContent).toContain('1 silent relay');
    await screen.findByRole('link', { name: /1 relay problems/ });
    expect(r.reads()).toBe(2);
  });

  it('does not read again for a heartbeat that names nothing', async () => {
    const hub = hubWithRelays();
    const r = await openOverview(hub);
    act(() => hub.emit(quiet()));
    hub.attentionGroups = groupAttention(
      { relays: [], refused: [{ relay: 'relay-dmz', site: 'mine-3' }], overdue: [], cells: [] },
      NOW,
    );
    act(() => hub.emit(quiet(['relay-dmz'])));
    // the second event's read shows; the first, sent before it, asked for none
    await screen.findByText(/mine-3 refused at relay-dmz/);
    expect(r.reads()).toBe(2);
    expect(screen.queryByRole('status', { name: /behind/i })).toBeNull();
  });

  it('says in one line when no heartbeat came for longer than the hub said, and reads again', async () => {
    const hub = hubWithRelays();
    const r = await openOverview(hub);
    act(() => hub.emit(quiet([], 75)));
    // the event reaches the page through the stream; then twice `withinS` passes with nothing
    await waitFor(() => {
      act(() => r.clock.advance(2 * 75_000));
      expect(screen.getByRole('status', { name: /behind/i }).textContent).toMatch(
        /No live update from the hub for \d+ min/,
      );
    });
    await waitFor(() => expect(r.reads()).toBe(2));
    act(() => hub.emit(quiet([], 75)));
    await waitFor(() => expect(screen.queryByRole('status', { name: /behind/i })).toBeNull());
  });

  it('says so while the stream reconnects, and reads again once it is back', async () => {
    const hub = hubWithRelays();
    const r = await openOverview(hub);
    act(() => hub.dropStreams());
    const line = await screen.findByRole('status', { name: /behind/i });
    expect(line.textContent).toMatch(/Live updates interrupted/);
    expect(r.reads()).toBe(1);
    act(() => r.clock.advance(1000));
    await waitFor(() => expect(r.reads()).toBe(2));
    await waitFor(() => expect(screen.queryByRole('status', { name: /behind/i })).toBeNull());
  });
});
