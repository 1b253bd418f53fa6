import { PublicationListItemSchema } from '@driftline/protocol';
import { act, screen, waitFor, within } from '@testing-library/preact';
import { afterEach, describe, expect, it } from 'vitest';
import { HOUR, iso, MIN, planRequest, smallWorld } from './support/fixtures.js';
import { MockHub } from './support/mockHub.js';
import { renderApp } from './support/renderApp.js';

let teardown = () => {};
afterEach(() => teardown());

/**
 * The Links view says what went down to a site and was not confirmed by its agent (decision 300): a
 * plan request still pending past its `confirmBy` is `unconfirmed`, and the hub sends it again.
 */
describe('unconfirmed in the links view', () => {
  function hubWith(): MockHub {
    const hub = new MockHub(smallWorld());
    const [first, second] = hub.sites;
    if (!first || !second) throw new Error('smallWorld has two sites at least');
    hub.planRequests = [
      planRequest({
        requestId: 'pr-late',
        site: first.site,
        environment: 'prod',
        component: 'network',
        confirmBy: iso(5 * MIN),
        unconfirmed: true,
      }),
      // Due in 10 min: not unconfirmed yet; the browser turns it so when the time passes.
      planRequest({
        requestId: 'pr-due',
        site: second.site,
        environment: 'prod',
        component: 'dns',
        confirmBy: iso(-10 * MIN),
        unconfirmed: false,
      }),
      // Delivered by the agent's word: never unconfirmed.
      planRequest({
        requestId: 'pr-ok',
        site: second.site,
        environment: 'prod',
        component: 'app',
        state: 'delivered',
        deliveredAt: iso(MIN),
        confirmBy: iso(20 * MIN),
        unconfirmed: false,
      }),
    ];
    return hub;
  }

  it('shows each site’s unconfirmed requests, sent again, and turns a due one unconfirmed as time passes', async () => {
    const hub = hubWith();
    const [first, second] = hub.sites;
    const r = renderApp(hub, '?view=links');
    teardown = r.teardown;
    const table = await screen.findByRole('table', { name: /Each site's link/ });
    expect(within(table).getByRole('columnheader', { name: 'unconfirmed down' })).toBeTruthy();
    const row = (site: string) => within(table).getByRole('row', { name: new RegExp(`^${site}\\b`) });
    await waitFor(() =>
      expect(row(first?.site ?? '').textContent).toContain('1 plan request unconfirmed, sent again'),
    );
    expect(within(row(first?.site ?? '')).getByTitle(/prod\/network/)).toBeTruthy();
    expect(row(second?.site ?? '').textContent).not.toContain('unconfirmed');
    act(() => r.clock.advance(11 * MIN));
    await waitFor(() =>
      expect(row(second?.site ?? '').textContent).toContain('1 plan request unconfirmed, sent again'),
    );
  });

  it('counts publications whose delivery the hub marks unconfirmed beside the requests', async () => {
    const hub = hubWith();
    const site = hub.sites[0]?.site ?? '';
    const delivery = { agent: null, state: 'queued', bytes: 0, reason: null, updatedAt: iso(HOUR) };
    hub.publications = [
      PublicationListItemSchema.parse({
        publicationId: 'p-1',
        name: 'aws-5.80.zip',
        fileKind: 'provider-mirror',
        sha256: 'a'.repeat(64),
        size: 1024,
        sites: [site],
        publishedAt: iso(HOUR),
        expiresAt: null,
        stateCounts: { queued: 1 },
        deliveries: [{ ...delivery, site, unconfirmed: true }],
      }),
    ];
    const r = renderApp(hub, '?view=links');
    teardown = r.teardown;
    const table = await screen.findByRole('table', { name: /Each site's link/ });
    const row = () => within(table).getByRole('row', { name: new RegExp(`^${site}\\b`) });
    await waitFor(() =>
      expect(row().textContent).toContain('1 plan request and 1 publication unconfirmed, sent again'),
    );
    expect(within(row()).getByTitle(/publication aws-5\.80\.zip/)).toBeTruthy();
  });

  it('shows the same on the site view’s link table', async () => {
    const hub = hubWith();
    const site = hub.sites[0]?.site ?? '';
    const r = renderApp(hub, `?view=site&site=${site}`);
    teardown = r.teardown;
    await waitFor(() => expect(screen.getByText('1 plan request unconfirmed, sent again')).toBeTruthy());
  });
});
