import { act, fireEvent, screen, waitFor, within } from '@testing-library/preact';
import { afterEach, describe, expect, it } from 'vitest';
import { cell, counts, HOUR, iso, MIN, runItem, smallWorld } from './support/fixtures.js';
import { MockHub } from './support/mockHub.js';
import { renderApp } from './support/renderApp.js';

let teardown = () => {};
afterEach(() => teardown());

function start(hub: MockHub, search = '') {
  const r = renderApp(hub, search);
  teardown = r.teardown;
  return r;
}

/** smallWorld, plus a site enrolled and never heard from, a blocked cell and plans of ref pr/42. */
function fleetHub() {
  const hub = new MockHub(smallWorld());
  hub.sites.push({
    ...hub.sites[0]!,
    site: 'mine-3' as never,
    lastContactAt: null,
    cells: 0,
    statusCounts: {},
  });
  hub.cells.push(
    cell({
      site: 'lab',
      environment: 'prod',
      component: 'iam',
      status: 'blocked',
      counts: null,
      reason: 'missing-provider',
      needs: ['registry.terraform.io/hashicorp/aws 5.31.0 linux_amd64'],
      plannedAt: iso(2 * HOUR),
    }),
  );
  hub.refCells.push(
    cell({
      site: 'ship-7',
      environment: 'prod',
      component: 'network',
      status: 'changes',
      counts: counts({ add: 7 }),
      ref: 'pr/42',
      commit: '0123456789abcdef0123456789abcdef01234567',
    }),
  );
  return hub;
}

describe('fleet overview', () => {
  it('is the landing view: counts by status, stale and unreachable, each a link', async () => {
    const hub = fleetHub();
    start(hub);
    await screen.findByRole('heading', { name: /Fleet overview/ });
    const totals = screen.getByRole('list', { name: 'Cells by status' });
    const link = (name: RegExp) => within(totals).getByRole('link', { name });
    expect(link(/1 failed/).getAttribute('href')).toBe('?status=failed');
    expect(link(/1 blocked/).getAttribute('href')).toBe('?status=blocked');
    expect(link(/2 changes/).textContent).toContain('±');
    expect(link(/2 stale/).getAttribute('href')).toBe('?stale=1');
    expect(link(/1 of 4 sites unreachable/).getAttribute('href')).toBe('?view=links');
    fireEvent.click(link(/1 failed/));
    await screen.findByRole('grid');
    expect(window.location.search).toBe('?status=failed');
  });

  it('lists the worst cells first, failed before stuck locks, drift, stale and blocked, each a link', async () => {
    start(fleetHub());
    await screen.findByRole('heading', { name: /Needs attention/ });
    const section = screen.getByRole('region', { name: /Needs attention/ });
    const items = within(section)
      .getAllByRole('listitem')
      .map((li) => li.textContent ?? '');
    // The unreachable site is one row of its own (its stale cell is not listed again), then the cells.
    expect(items.map((t) => t.split(/\s+/).slice(0, 3).join(' '))).toEqual([
      '⌁ unreachable polar-1:',
      '✕ failed lab',
      '✕ failed ship-7',
      '⊘ stuck lock',
      '≈ drift ship-7',
      '⊟ blocked lab',
    ]);
    expect(items[0]).toContain('polar-1: 2 cells, unreachable, last heard 3 d ago');
    expect(items[5]).toContain('needs registry.terraform.io/hashicorp/aws 5.31.0 linux_amd64');
    const blocked = within(section).getByRole('link', { name: 'lab · prod / iam' });
    expect(blocked.getAttribute('href')).toBe('?view=cell&site=lab&env=prod&comp=iam');
  });

  it('says per site why it has no data, and counts per environment', async () => {
    start(fleetHub());
    const sites = await screen.findByRole('table', { name: /Sites, worst first/ });
    // Rows come in the hub's order (`/api/sites?sort=problems`: issue 41), not sorted again here.
    const row = (site: string) =>
      within(sites)
        .getAllByRole('row')
        .find((r) => r.querySelector('th')?.textContent?.startsWith(`${site} `));
    expect(row('polar-1')?.textContent).toContain('link down since 3 d ago');
    expect(row('mine-3')?.textContent).toContain('enrolled, never heard from');
    const envs = screen.getByRole('table', { name: /Environments/ });
    const prod = within(envs).getByRole('row', { name: /^prod/ });
    expect(within(prod).getByRole('link', { name: 'prod' }).getAttribute('href')).toBe('?env=prod');
    expect(prod.textContent).toMatch(/^prod35/); // 3 sites, 5 cells
  });

  it('reads the summary again a moment after live changes', async () => {
    const hub = fleetHub();
    const r = start(hub);
    await screen.findByRole('heading', { name: /Fleet overview/ });
    await waitFor(() => expect(hub.openStreams).toBe(1));
    const reads = () => hub.requests.filter((q) => q.path === 'GET /api/fleet').length;
    expect(reads()).toBe(1);
    act(() =>
      hub.emit({
        type: 'cell-updated',
        cell: cell({
          site: 'ship-7',
          environment: 'prod',
          component: 'network',
          status: 'failed',
          reason: 'x',
        }),
      }),
    );
    // the event arrives through the stream a moment later; the summary is read 2 s (clock time) after it
    await waitFor(() => {
      act(() => r.clock.advance(2000));
      expect(reads()).toBe(2);
    });
    await screen.findByRole('link', { name: /2 failed/ });
  });
});

describe('links, needs and refs', () => {
  it('shows each site’s link: why, last contact, next declared window, queue, oldest unsent, publications pending', async () => {
    start(fleetHub(), '?view=links');
    const table = await screen.findByRole('table', { name: /Each site's link/ });
    const polar = within(table).getByRole('row', { name: /polar-1/ });
    expect(polar.textContent).toContain('link down since 3 d ago');
    expect(polar.textContent).toContain('1 of 1');
    const mine = within(table).getByRole('row', { name: /mine-3/ });
    expect(mine.textContent).toContain('enrolled, never heard from');
    expect(mine.textContent).toContain('0 of 1');
    const ship = within(table).getByRole('row', { name: /ship-7/ });
    expect(ship.textContent).toContain('in 1 h'); // `0 * * * *` fires on the hour
    expect(ship.textContent).toContain('2 h ago');
    expect(document.body.textContent).toContain("the relay's own contact plan is not known to the hub");
  });

  it('lists what sites need, with the cells waiting for it', async () => {
    start(fleetHub(), '?view=needs');
    const table = await screen.findByRole('table', { name: /Needs by site/ });
    const row = within(table).getAllByRole('row')[1]!;
    expect(row.textContent).toContain('lab');
    expect(row.textContent).toContain('registry.terraform.io/hashicorp/aws 5.31.0 linux_amd64');
    expect(within(row).getByRole('link', { name: 'prod / iam' }).getAttribute('href')).toBe(
      '?view=cell&site=lab&env=prod&comp=iam',
    );
  });

  it('shows a ref’s matrix from the URL, lists refs to choose from, and a blocked cell with its needs', async () => {
    const hub = fleetHub();
    start(hub, '?ref=pr%2F42');
    await screen.findByRole('grid');
    expect(hub.requests.map((r) => r.path)).toContain('GET /api/matrix?ref=pr%2F42');
    const grid = screen.getByRole('grid');
    expect(grid.textContent).toContain('changes +7 ~0 -0');
    expect(grid.textContent).toContain('ref pr/42 commit 0123456');
    const select = screen.getByLabelText('Ref') as HTMLSelectElement;
    await waitFor(() => expect([...select.options].map((o) => o.value)).toEqual(['', 'pr/42']));
    expect(select.value).toBe('pr/42');
    fireEvent.change(select, { target: { value: '' } });
    await waitFor(() => expect(screen.getByRole('grid').textContent).toContain('blocked: missing-provider'));
    expect(window.location.search).toBe('?view=matrix');
    const blocked = screen.getAllByRole('gridcell').find((c) => c.textContent?.includes('blocked:'))!;
    expect(blocked.classList.contains('st-blocked')).toBe(true);
    expect(blocked.querySelector('.t-face')?.textContent).toContain('⊟blocked');
    expect(blocked.textContent).toContain('needs registry.terraform.io/hashicorp/aws 5.31.0 linux_amd64');
  });
});

describe('cell history', () => {
  it('draws a status strip of the last runs and lists drift episodes with a point-in-time link', async () => {
    const hub = new MockHub(smallWorld());
    const key = { site: 'ship-7', environment: 'staging', component: 'network' };
    hub.addRuns([
      runItem({ n: 1, ...key, status: 'drift', counts: counts({ drift: 3 }) }),
      runItem({ n: 2, ...key, status: 'clean' }),
      runItem({ n: 3, ...key, status: 'drift', counts: counts({ drift: 1 }) }),
      runItem({ n: 4, ...key, status: 'clean' }),
    ]);
    start(hub, '?view=cell&site=ship-7&env=staging&comp=network');
    const strip = await screen.findByRole('list', { name: 'Last 4 runs, oldest first' });
    const runs = within(strip).getAllByRole('link');
    expect(runs.map((a) => a.querySelector('[aria-hidden]')?.textContent)).toEqual(['✓', '≈', '✓', '≈']);
    expect(runs[3]!.textContent).toMatch(/^≈drift \(3\), planned 1 h ago/);
    const episodes = screen.getByRole('table', { name: 'Drift episodes, newest first' });
    const rows = within(episodes).getAllByRole('row').slice(1);
    expect(rows).toHaveLength(2);
    expect(rows[0]!.textContent).toContain('ongoing');
    expect(rows[1]!.textContent).toContain('after 1 h');
    const then = within(rows[1]!).getByRole('link', { name: 'matrix then' });
    expect(new URLSearchParams(then.getAttribute('href')!).get('at')).toBe(iso(3 * HOUR - 10 * MIN));
  });
});
