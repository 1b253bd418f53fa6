import { type DriftEpisode, DriftEpisodeSchema, WaiverSchema } from '@driftline/protocol';
import { act, screen, waitFor, within } from '@testing-library/preact';
import { afterEach, describe, expect, it } from 'vitest';
import { counts, HOUR, iso, NOW, runItem, smallWorld } from './support/fixtures.js';
import { MockDrift } from './support/mockDrift.js';
import { MockHub } from './support/mockHub.js';
import { renderApp } from './support/renderApp.js';

/** Issue 58 item 6: what the dashboard says of failing checks, imports and waivers is true. */

let teardown = () => {};
afterEach(() => teardown());

const KEY = { site: 'ship-7', environment: 'prod', component: 'network' };

function checkEpisode(e: Partial<DriftEpisode> & { address: string }): DriftEpisode {
  return DriftEpisodeSchema.parse({
    id: `check|ship-7|prod|network|${e.address}|r1`,
    kind: 'check',
    ...KEY,
    type: 'check',
    attributes: [],
    signature: `check ${e.address}`,
    state: 'open',
    firstSeen: iso(5 * HOUR),
    lastSeen: iso(1 * HOUR),
    resolvedAt: null,
    durationS: 5 * 3600,
    firstRunId: 'r1',
    lastRunId: 'r2',
    acknowledgedBy: null,
    acknowledgedAt: null,
    waiver: null,
    ...e,
  });
}

function hubWithFailingCheck() {
  const hub = new MockHub(smallWorld());
  const drift = new MockDrift(
    [
      checkEpisode({ address: 'check.health' }),
      checkEpisode({
        id: 'check|ship-7|prod|network|check.dns|r0',
        address: 'check.dns',
        state: 'resolved',
        firstSeen: iso(30 * HOUR),
        lastSeen: iso(26 * HOUR),
        resolvedAt: iso(25 * HOUR),
        durationS: 5 * 3600,
      }),
      // Another cell's check: not this page's.
      checkEpisode({ id: 'check|polar-1', address: 'check.other', site: 'polar-1' }),
    ],
    () => NOW,
  );
  hub.extra = (m, u, b) => drift.handle(m, u, b);
  hub.addRuns([
    runItem({ n: 1, ...KEY, status: 'clean', checksFailed: 1, failingChecks: ['check.health'] }),
    runItem({ n: 2, ...KEY, status: 'clean', checksFailed: 0 }),
  ]);
  return { hub, drift };
}

function start(hub: MockHub, search: string) {
  const r = renderApp(hub, search);
  teardown = r.teardown;
  return r;
}

describe('the cell page and failing checks', () => {
  it('names the failing checks and their episodes, and never says the cell is fine', async () => {
    start(hubWithFailingCheck().hub, '?view=cell&site=ship-7&env=prod&comp=network');
    const table = await screen.findByRole('table', { name: /Check episodes/ });
    const rows = within(table).getAllByRole('row').slice(1);
    expect(rows.map((r) => r.textContent)).toEqual([
      expect.stringMatching(/check\.health.*failing/),
      expect.stringMatching(/check\.dns.*passed again/),
    ]);
    expect(document.body.textContent).not.toContain('check.other');
    expect(document.body.textContent).not.toContain('No drift found');
    expect(document.body.textContent).toContain('No resource drift found in these runs');
    expect(screen.getByRole('heading', { name: '1 failing check' })).toBeTruthy();
  });

  it('marks the runs with failing checks and names the checks', async () => {
    start(hubWithFailingCheck().hub, '?view=cell&site=ship-7&env=prod&comp=network');
    const runs = await screen.findByRole('table', { name: 'Runs, newest first' });
    const [, newest, older] = within(runs).getAllByRole('row');
    expect(newest?.textContent).toContain('1 failing check: check.health');
    expect(older?.textContent).not.toContain('failing check');
  });

  it('reads the episodes again when a run of the cell arrives', async () => {
    const { hub, drift } = hubWithFailingCheck();
    start(hub, '?view=cell&site=ship-7&env=prod&comp=network');
    await screen.findByRole('table', { name: /Check episodes/ });
    await waitFor(() => expect(hub.openStreams).toBe(1));
    drift.episodes.push(checkEpisode({ id: 'check|new', address: 'check.tls' }));
    act(() =>
      hub.emit({
        type: 'run-added',
        run: runItem({
          n: 0,
          ...KEY,
          status: 'clean',
          checksFailed: 2,
          failingChecks: ['check.health', 'check.tls'],
        }),
      }),
    );
    await screen.findByRole('heading', { name: '2 failing checks' });
  });

  it('says nothing of checks for a cell that never failed one', async () => {
    const hub = new MockHub(smallWorld());
    hub.addRuns([runItem({ n: 1, ...KEY, status: 'clean' })]);
    start(hub, '?view=cell&site=ship-7&env=prod&comp=network');
    await screen.findByRole('table', { name: 'Runs, newest first' });
    await waitFor(() => expect(hub.requests.map((r) => r.path.split('?')[0])).toContain('GET /api/drift'));
    expect(screen.queryByRole('table', { name: /Check episodes/ })).toBeNull();
    expect(document.body.textContent).toContain('No resource drift found in these runs');
  });
});

describe('the matrix tile and imports', () => {
  it('shows a plan that only imports as an import, not as +0~0-0', async () => {
    const world = smallWorld();
    world.cells = world.cells.map((c) =>
      c.site === 'ship-7' && c.environment === 'prod' && c.component === 'compute'
        ? { ...c, counts: counts({ import: 1 }) }
        : c,
    );
    start(new MockHub(world), '?view=matrix');
    await screen.findByRole('grid');
    await waitFor(() => expect(document.querySelector('.st-changes .t-txt')?.textContent).toBe('⇣1'));
    const tile = document.querySelector<HTMLElement>('[role=gridcell].st-changes')!;
    expect(tile.querySelector('.sr-only')?.textContent).toMatch(/^changes \+0 ~0 -0 \(1 imported\)/);
  });
});

describe("the overview's per-site Drift column", () => {
  it('counts the drift attention counts, a plan with changes that also found drift included', async () => {
    const world = smallWorld();
    world.cells = world.cells.map((c) =>
      c.site === 'ship-7' && c.environment === 'prod' && c.component === 'compute'
        ? { ...c, counts: counts({ add: 2, drift: 2 }) }
        : c,
    );
    start(new MockHub(world), '');
    const sites = await screen.findByRole('table', { name: /Sites, worst first/ });
    const headers = within(sites)
      .getAllByRole('columnheader')
      .map((h) => h.textContent);
    const row = within(sites)
      .getAllByRole('row')
      .find((r) => r.querySelector('th')?.textContent?.startsWith('ship-7 '));
    // ship-7: staging/network drifted, prod/compute has changes and found drift: attention lists both.
    expect(row?.children[headers.indexOf('drift')]?.textContent).toBe('2');
  });
});

describe('the waivers list', () => {
  it('shows where each waiver applies: its sites, environments and components, or everywhere', async () => {
    const hub = new MockHub(smallWorld());
    const drift = new MockDrift([], () => NOW);
    const waiver = (
      id: string,
      scope: { sites?: string[]; environments?: string[]; components?: string[] },
    ) =>
      WaiverSchema.parse({
        id,
        pattern: 'drift aws_security_group *',
        attributes: null,
        sites: [],
        environments: [],
        components: [],
        ...scope,
        expiresAt: iso(-7 * 24 * HOUR),
        reason: `reason ${id}`,
        author: 'ada',
        createdAt: iso(HOUR),
        removedAt: null,
        removedBy: null,
        active: true,
        covers: 0,
      });
    drift.waivers.push(
      waiver('w-1', { sites: ['ship-7', 'polar-*'], environments: ['prod'] }),
      waiver('w-2', {}),
    );
    hub.extra = (m, u, b) => drift.handle(m, u, b);
    start(hub, '?view=drift');
    const table = await screen.findByRole('table', { name: 'Waivers' });
    const [, scoped, everywhere] = within(table).getAllByRole('row');
    expect(within(table).getByRole('columnheader', { name: 'scope' })).toBeTruthy();
    expect(scoped?.textContent).toContain('sites ship-7, polar-*');
    expect(scoped?.textContent).toContain('environments prod');
    expect(scoped?.textContent).not.toContain('components');
    expect(everywhere?.textContent).toContain('every site');
  });
});

describe('one word for results the hub has not acknowledged', () => {
  it('is what edge-agent status calls them, in the site view and the Links view', async () => {
    start(new MockHub(smallWorld()), '?view=site&site=polar-1');
    await screen.findByRole('heading', { name: /Site polar-1/ });
    const headers = () => screen.getAllByRole('columnheader').map((h) => h.textContent ?? '');
    // The Link table and the Agents table: the agent's own count, as of its last report.
    expect(headers().filter((h) => h === 'unacknowledged at last report')).toHaveLength(2);
    expect(headers().filter((h) => /queue/.test(h))).toEqual([]);
    teardown();
    start(new MockHub(smallWorld()), '?view=links');
    await screen.findByRole('heading', { name: /Links/ });
    expect(headers()).toContain('unacknowledged at last report');
    expect(document.body.textContent).not.toContain('results queued');
    expect(document.body.textContent).toContain('edge-agent status');
  });
});
