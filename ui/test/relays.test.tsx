import { screen, waitFor, within } from '@testing-library/preact';
import { afterEach, describe, expect, it } from 'vitest';
import { HOUR, iso, MIN, smallWorld } from './support/fixtures.js';
import { MockHub } from './support/mockHub.js';
import { renderApp } from './support/renderApp.js';

let teardown = () => {};
afterEach(() => teardown());

describe('relays in the links view', () => {
  it('shows each relay’s own report, its problems first, each with the command that fixes it', async () => {
    const hub = new MockHub(smallWorld());
    const status = {
      at: Date.parse(iso(2 * HOUR)),
      version: '0.1.0',
      custody: { bundles: 3, bytes: 900, oldestAt: Date.parse(iso(HOUR)) },
      upstreamRefusals: { forbidden: 4 },
      sitesRefused: ['ship-8'],
      sites: ['ship-7'],
      upstreams: [{ name: 'hub', ok: true, code: null, message: null }],
    };
    hub.relays = [
      {
        name: 'ground-2',
        sites: ['*'],
        lastUsedAt: null,
        reportedAt: null,
        status: null,
        problems: [],
        unkeyed: true,
      },
      {
        name: 'relay-1',
        sites: ['ship-7'],
        lastUsedAt: iso(2 * HOUR),
        reportedAt: iso(2 * HOUR),
        status,
        problems: [
          {
            code: 'sites-refused',
            message:
              'relay-1 forwarded bundles of ship-8, which its token does not act for; they were refused',
            fix: 'hub peer sites relay-1 --sites ship-7,ship-8',
          },
        ],
      },
    ];
    const r = renderApp(hub, '?view=links');
    teardown = r.teardown;
    // every load of the view answered before the test ends (none goes out after teardown)
    await screen.findByRole('table', { name: /Each site's link/ });
    await waitFor(() => expect(hub.requests.map((q) => q.path)).toContain('GET /api/publications'));
    const table = await screen.findByRole('table', { name: /Each relay's own report/ });
    const rows = within(table).getAllByRole('row').slice(1);
    expect(rows.map((x) => within(x).getByRole('rowheader').textContent)).toEqual([
      'relay-1',
      'ground-2 unkeyed',
    ]);
    // a relay enrolled without a key says so (issue 42): its clocks are bounded, not checked
    expect(
      within(rows[1] as HTMLElement)
        .getByText('unkeyed')
        .getAttribute('title'),
    ).toMatch(/--no-key/);
    expect(rows[0]?.textContent).toContain('ship-8, which its token does not act for');
    expect(
      within(rows[0] as HTMLElement).getByText('hub peer sites relay-1 --sites ship-7,ship-8').tagName,
    ).toBe('CODE');
    expect(rows[0]?.textContent).toContain('3 bundles, oldest');
    expect(rows[1]?.textContent).toContain('no report yet');
  });

  it('keeps a revoked relay as revoked at …, and never reads a site behind a silent relay in contact', async () => {
    const hub = new MockHub(smallWorld());
    // Every site of the mock fleet came through relay-dmz, which has not reported for 10 minutes.
    hub.relays = [
      {
        name: 'relay-dmz',
        sites: ['*'],
        lastUsedAt: iso(10 * MIN),
        reportedAt: iso(10 * MIN),
        status: null,
        problems: [
          {
            code: 'silent',
            message: 'no status from relay-dmz for 10 min: the relay is down or its link is',
            fix: 'on the relay: relay config check --online --config relay.yaml',
          },
        ],
      },
      {
        name: 'old-relay',
        sites: ['ship-7'],
        lastUsedAt: iso(3 * HOUR),
        reportedAt: null,
        status: null,
        problems: [],
        revokedAt: '2025-06-01T10:00:00.000Z',
      },
    ];
    const r = renderApp(hub, '?view=links');
    teardown = r.teardown;
    const links = await screen.findByRole('table', { name: /Each site's link/ });
    await waitFor(() => expect(links.textContent).toContain('behind relay-dmz, silent since'));
    const why = within(links)
      .getAllByRole('row')
      .slice(1)
      .map((x) => x.querySelector('td')?.textContent ?? '');
    expect(why.length).toBeGreaterThan(0);
    for (const w of why) {
      expect(w).not.toBe('in contact');
      expect(w).toContain(
        `behind relay-dmz, silent since ${iso(10 * MIN)
          .replace('T', ' ')
          .replace(/\.\d+Z$/, ' UTC')}`,
      );
    }
    const relays = await screen.findByRole('table', { name: /Each relay's own report/ });
    const rows = within(relays).getAllByRole('row').slice(1);
    expect(rows.map((x) => within(x).getByRole('rowheader').textContent)).toEqual(['relay-dmz', 'old-relay']);
    expect(rows[1]?.textContent).toContain('revoked at 2025-06-01 10:00:00 UTC');
    await waitFor(() => expect(hub.requests.map((q) => q.path)).toContain('GET /api/publications'));
  });

  it('shows no relays table for a hub from before /api/relays', async () => {
    const hub = new MockHub(smallWorld());
    const r = renderApp(hub, '?view=links');
    teardown = r.teardown;
    await screen.findByRole('table', { name: /Each site's link/ });
    await waitFor(() => expect(hub.requests.map((q) => q.path)).toContain('GET /api/relays'));
    await new Promise((done) => setTimeout(done, 50)); // the 404 answer is rendered (as nothing)
    expect(screen.queryByRole('table', { name: /Each relay's own report/ })).toBeNull();
  });
});
