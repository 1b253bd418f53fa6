import { act, fireEvent, screen, waitFor, within } from '@testing-library/preact';
import { afterEach, describe, expect, it } from 'vitest';
import { cell, counts, HOUR, iso, MIN, smallWorld } from './support/fixtures.js';
import { MockHub } from './support/mockHub.js';
import { renderApp } from './support/renderApp.js';

let teardown = () => {};
afterEach(() => teardown());

function start(search = '?view=matrix') {
  const hub = new MockHub(smallWorld());
  const r = renderApp(hub, search);
  teardown = r.teardown;
  return { hub, ...r };
}

/** The grid, once every part of the matrix has been read. */
async function ready() {
  await screen.findByRole('grid');
  await waitFor(() => expect(document.querySelector('.matrix-view [aria-busy]')).toBeNull());
}

const gridCell = (text: RegExp) =>
  screen.getAllByRole('gridcell').find((c) => text.test(c.textContent ?? ''));

describe('matrix', () => {
  it('shows every status as text and icon, with counts as +a ~c -d and failure reasons', async () => {
    start();
    await ready();
    // colour comes with the words, never alone: each tile shows an icon and a few characters, and its
    // full text is its accessible content
    const said = (status: string) => {
      const tile = document.querySelector<HTMLElement>(`[role=gridcell].st-${status}`)!;
      return `${tile.querySelector('.t-face')?.textContent} | ${tile.querySelector('.sr-only')?.textContent}`;
    };
    expect(said('clean')).toMatch(/^✓clean20 min \| clean · /);
    expect(said('drift')).toMatch(/^≈drift 3.* \| drift \(3\) · /);
    expect(said('failed')).toMatch(/^✕failed.* \| failed: timeout · /);
    expect(said('locked')).toMatch(/^⊘locked.* \| locked: stuck-lock · /);
    expect(said('redaction')).toMatch(/^⚠redact.* \| redaction failed: aws-key · /);
    expect(said('nodata')).toMatch(/^∅no data.* \| no data · /);
    const tile = gridCell(/changes \+2/)!;
    expect(tile.textContent).toContain('changes +2 ~1 -3 · ship-7 · prod / compute');
    expect(tile.classList.contains('st-changes')).toBe(true);
    expect(tile.querySelector('.t-face')?.textContent).toBe('±+2~1-33 h');
    expect(tile.querySelector('.t-face')?.getAttribute('aria-hidden')).toBe('true');
  });

  it('says how old each fact is and how long it took to arrive, with the absolute time on hover', async () => {
    start();
    await ready();
    const c = gridCell(/changes \+2/)!;
    expect(c.textContent).toContain('planned 3 h ago');
    expect(c.textContent).toContain('arrived 40 min later');
    fireEvent.mouseOver(c);
    const time = document.querySelector('.tip-card time')!;
    expect(time.getAttribute('title')).toBe(
      `${iso(3 * HOUR)
        .slice(0, 19)
        .replace('T', ' ')} UTC`,
    );
    expect(time.getAttribute('datetime')).toBe(iso(3 * HOUR));
  });

  it('updates the age by itself as time passes', async () => {
    const { clock } = start();
    await ready();
    expect(gridCell(/changes \+2/)!.textContent).toContain('planned 3 h ago');
    act(() => clock.advance(2 * HOUR));
    expect(gridCell(/changes \+2/)!.textContent).toContain('planned 5 h ago');
  });

  it('marks stale cells, and marks cells stale once time passes twice their interval', async () => {
    const { clock } = start();
    await ready();
    expect(gridCell(/locked/)!.textContent).toContain('stale');
    expect(gridCell(/^✓clean/)!.textContent).not.toContain('stale');
    act(() => clock.advance(2 * HOUR));
    expect(gridCell(/^✓clean/)!.textContent).toContain('stale');
  });

  it('shows the last known state of an unreachable site, with since when', async () => {
    start();
    await ready();
    const c = gridCell(/changes \+1/)!;
    expect(c.textContent).toContain('last known — site unreachable since 3 d ago');
    expect(c.classList.contains('is-unreachable')).toBe(true);
  });

  it('puts one row per component, columns grouped by environment then site, and pivots on a component', async () => {
    start();
    await ready();
    expect(screen.getAllByRole('rowheader').map((h) => h.textContent)).toEqual(['compute', 'dns', 'network']);
    const heads = screen.getAllByRole('columnheader').map((h) => h.textContent);
    expect(heads).toEqual([
      'environment',
      'prod',
      'staging',
      'component',
      'lab',
      'polar-1',
      'ship-7',
      'lab',
      'polar-1',
      'ship-7',
    ]);
    // rows sit one below the other (sizes carry units: Preact 11 does not add px)
    const tops = screen
      .getAllByRole('row')
      .slice(2)
      .map((r) => r.style.top);
    expect(tops[0]).toMatch(/^\d+px$/);
    expect(new Set(tops).size).toBe(tops.length);
    fireEvent.click(screen.getAllByRole('rowheader').find((h) => h.textContent === 'network')!);
    await screen.findByText(/network: sites × environments/);
    expect(window.location.search).toBe('?pivot=network');
    expect(screen.getAllByRole('rowheader').map((h) => h.textContent)).toEqual(['polar-1', 'ship-7']);
  });

  it('reads what is on screen first, then the matrix one environment at a time', async () => {
    const { hub } = start();
    await ready();
    const reads = hub.requests.map((r) => r.path).filter((p) => /fleet|matrix/.test(p));
    expect(reads[0]).toBe('GET /api/fleet');
    // the first environment at the sites in view, as one window
    expect(reads[1]).toBe(
      `GET /api/matrix?environment=prod&sites=${encodeURIComponent('lab,polar-1,ship-7')}`,
    );
    expect(reads.slice(2)).toEqual([
      'GET /api/matrix?environment=prod',
      'GET /api/matrix?environment=staging',
    ]);
  });

  it('reads only the pivot’s component first when pivoted', async () => {
    const { hub } = start('?pivot=dns');
    await ready();
    const reads = hub.requests.map((r) => r.path).filter((p) => /matrix/.test(p));
    expect(reads[0]).toBe('GET /api/matrix?component=dns');
  });

  it('shows counts, times, ref and commit in a card on focus', async () => {
    const { hub } = start();
    hub.cells[0] = { ...hub.cells[0]!, ref: 'main', commit: 'abcdef1234567890abcdef1234567890abcdef12' };
    await ready();
    const tile = gridCell(/^✓clean/)!;
    act(() => tile.focus());
    const card = document.querySelector('.tip-card')!;
    expect(card.getAttribute('aria-hidden')).toBe('true');
    expect(card.textContent).toContain('ship-7 · prod / network');
    expect(card.textContent).toContain('planned 20 min ago');
    expect(card.textContent).toContain('arrived 10 min later');
    expect(card.textContent).toContain('ref main commit abcdef1');
    act(() => tile.blur());
    expect(document.querySelector('.tip-card')).toBeNull();
  });

  it('asks the hub for the cells of a status filter alone, not the whole matrix', async () => {
    const { hub } = start('?status=changes');
    await ready();
    const reads = hub.requests.map((r) => r.path).filter((p) => /matrix/.test(p));
    expect(reads).toEqual(['GET /api/matrix?status=changes']);
    expect(screen.getAllByText(/changes \+/)).toHaveLength(2);
  });

  it('filters by status, site, environment, component text and stale, and keeps them in the URL', async () => {
    start('?status=changes');
    await ready();
    expect(screen.getByRole('grid').textContent).not.toContain('clean');
    expect(screen.getAllByText(/changes \+/)).toHaveLength(2);
    fireEvent.input(screen.getByLabelText('Search'), { target: { value: 'comp' } });
    expect(window.location.search).toBe('?q=comp&status=changes');
    expect(screen.getAllByText(/changes \+/)).toHaveLength(1);
    fireEvent.change(screen.getByLabelText('Status'), { target: { value: '' } });
    fireEvent.click(screen.getByLabelText('stale only'));
    expect(window.location.search).toBe('?q=comp&stale=1');
    // Without the status filter the whole matrix is read again (the server had filtered it).
    expect(await screen.findByText(/No cells match/)).toBeTruthy();
  });

  it('asks the hub for the matrix at an earlier time and pauses live updates', async () => {
    const { hub } = start();
    await ready();
    const at = iso(2 * HOUR);
    hub.history.set(at, [
      cell({
        site: 'ship-7',
        environment: 'prod',
        component: 'network',
        status: 'failed',
        counts: null,
        reason: 'exit-1',
      }),
    ]);
    fireEvent.change(screen.getByLabelText('As known at (UTC)'), { target: { value: at.slice(0, 16) } });
    await screen.findByText(/failed: exit-1/);
    expect(hub.requests.map((r) => r.path)).toContain(`GET /api/matrix?at=${encodeURIComponent(at)}`);
    expect(screen.getByRole('note').textContent).toContain('Live updates are paused');
    expect(new URLSearchParams(window.location.search).get('at')).toBe(at);
  });

  it('moves focus through the grid with the keyboard and opens a cell with Enter', async () => {
    start();
    await ready();
    const first = screen
      .getAllByRole('gridcell')
      .concat(screen.getAllByRole('rowheader'))
      .find((c) => c.tabIndex === 0)!;
    expect(first.textContent).toBe('compute');
    first.focus();
    fireEvent.keyDown(first, { key: 'ArrowDown' });
    fireEvent.keyDown(document.activeElement!, { key: 'ArrowRight' });
    const focused = document.activeElement as HTMLElement;
    expect(focused.getAttribute('role')).toBe('gridcell');
    expect(focused.getAttribute('aria-colindex')).toBe('2');
    expect(focused.textContent).toContain('locked: stuck-lock');
    expect(document.querySelectorAll('[role=grid] [tabindex="0"]')).toHaveLength(1);
    fireEvent.keyDown(focused, { key: 'Enter' });
    await screen.findByRole('heading', { name: /lab \/ prod \/ dns/ });
    expect(window.location.search).toBe('?view=cell&site=lab&env=prod&comp=dns');
  });

  it('applies live cell updates and announces them politely', async () => {
    const { hub, clock } = start();
    await ready();
    await waitFor(() => expect(hub.openStreams).toBe(1));
    act(() =>
      hub.emit({
        type: 'cell-updated',
        cell: cell({
          site: 'ship-7',
          environment: 'prod',
          component: 'network',
          status: 'changes',
          counts: counts({ add: 5 }),
          plannedAt: iso(MIN),
        }),
      }),
    );
    await waitFor(() => expect(screen.getByRole('grid').textContent).toContain('changes +5 ~0 -0'));
    const status = screen.getByTestId('announcer');
    expect(status.getAttribute('role')).toBe('status');
    act(() => clock.advance(1000));
    expect(status.textContent).toBe('ship-7 prod/network is now changes +5 ~0 -0');
    expect(within(screen.getByRole('banner')).getByText(/live/)).toBeTruthy();
  });
});
