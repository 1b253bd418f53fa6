import { type PublicationListItem, PublicationListItemSchema } from '@driftline/protocol';
import { fireEvent, screen, within } from '@testing-library/preact';
import { afterEach, describe, expect, it } from 'vitest';
import { DAY, HOUR, iso, MIN, smallWorld } from './support/fixtures.js';
import { MockHub } from './support/mockHub.js';
import { renderApp } from './support/renderApp.js';

let teardown = () => {};
afterEach(() => teardown());

const MiB = 1024 * 1024;

/** A publication, built through the protocol schema like every other fixture. */
function publication(over: {
  publicationId: string;
  name: string;
  [field: string]: unknown;
}): PublicationListItem {
  return PublicationListItemSchema.parse({
    fileKind: 'provider-mirror',
    sha256: 'a'.repeat(64),
    size: 24 * MiB,
    sites: ['ship-7', 'polar-1'],
    publishedAt: iso(2 * HOUR),
    expiresAt: null,
    stateCounts: {},
    deliveries: [],
    ...over,
  });
}

function hubWithPublications() {
  const hub = new MockHub(smallWorld());
  hub.publications = [
    publication({
      publicationId: 'b-mirror',
      name: 'aws-5.80.zip',
      deliveries: [
        {
          site: 'ship-7',
          agent: 'a1',
          state: 'downloading',
          bytes: 6 * MiB,
          reason: null,
          updatedAt: iso(5 * MIN),
        },
      ],
    }),
    publication({
      publicationId: 'b-tool',
      name: 'tool.tar',
      fileKind: 'image',
      size: 2048,
      sites: ['ship-7'],
      publishedAt: iso(DAY),
      deliveries: [
        {
          site: 'ship-7',
          agent: 'a1',
          state: 'refused',
          bytes: 0,
          reason: "kind 'image' is not accepted by the local config (publications.accept)",
          updatedAt: iso(DAY - HOUR),
        },
      ],
    }),
  ];
  return hub;
}

function start(hub: MockHub, search: string) {
  const r = renderApp(hub, search);
  teardown = r.teardown;
  return r;
}

describe('publications view', () => {
  it('is reachable from the header and shows each publication × site with state, bytes received and age', async () => {
    start(hubWithPublications(), '');
    fireEvent.click(await screen.findByRole('link', { name: 'Publications' }));
    await screen.findByRole('heading', { name: 'Publications to outposts' });
    expect(window.location.search).toBe('?view=publications');
    const table = screen.getByRole('table', { name: 'Publications by site' });
    const rows = within(table).getAllByRole('row').slice(1);
    expect(rows.map((r) => r.textContent)).toEqual([
      expect.stringMatching(
        /aws-5\.80\.zip.*ship-7.*downloading.*6\.0 MiB of 24\.0 MiB \(25%\).*2 h ago.*5 min ago/,
      ),
      expect.stringMatching(/aws-5\.80\.zip.*polar-1.*queued.*0 B of 24\.0 MiB \(0%\).*2 h ago.*—/),
      expect.stringMatching(
        /tool\.tar \(image\).*ship-7.*refused — kind 'image' is not accepted.*0 B of 2 KiB/,
      ),
    ]);
    const bar = screen.getByRole('progressbar', { name: 'aws-5.80.zip at ship-7: 25% received' });
    expect(bar.getAttribute('value')).toBe(String(6 * MiB));
    expect(within(rows[1]!).getByRole('link', { name: 'polar-1' }).getAttribute('href')).toBe(
      '?view=site&site=polar-1',
    );
  });

  it('opens from a link saved while it was the bundles view', async () => {
    start(new MockHub(smallWorld()), '?view=bundles');
    await screen.findByRole('heading', { name: 'Publications to outposts' });
  });

  it('says how to publish when there are no publications', async () => {
    start(new MockHub(smallWorld()), '?view=publications');
    expect((await screen.findByText(/Nothing published yet/)).textContent).toContain(
      'hub publication publish',
    );
  });
});

describe('site view: pending publications', () => {
  it('lists the publications not yet placed at the site, and not those refused there', async () => {
    const hub = hubWithPublications();
    start(hub, '?view=site&site=ship-7');
    const table = await screen.findByRole('table', { name: 'Pending publications for ship-7' });
    const rows = within(table).getAllByRole('row').slice(1);
    expect(rows).toHaveLength(1);
    expect(rows[0]?.textContent).toMatch(/aws-5\.80\.zip.*downloading.*6\.0 MiB of 24\.0 MiB/);
    expect(hub.requests.map((r) => r.path)).toContain('GET /api/publications?site=ship-7');
  });

  it('says so when nothing is pending', async () => {
    const hub = hubWithPublications();
    start(hub, '?view=site&site=polar-1');
    await screen.findByRole('table', { name: 'Pending publications for polar-1' });
    hub.publications = [];
    teardown();
    start(hub, '?view=site&site=polar-1');
    expect((await screen.findByText(/every publication for this site is placed/)).textContent).toContain(
      'None',
    );
  });
});
