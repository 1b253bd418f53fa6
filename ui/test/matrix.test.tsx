import { act, fireEvent, screen, waitFor, within } from '@testing-library/preact';
import { afterEach, describe, expect, it } from 'vitest';
import { cell, counts, HOUR, iso, MIN, smallWorld } from './support/fixtures.js';
import { MockHub } from './support/mockHub.js';
import { renderApp } from './support/renderApp.js';

let teardown = () => {};
afterEach(() => teardown());

function start(search = '') {
  const hub = new MockHub(smallWorld());
  const r = renderApp(hub, search);
  teardown = r.teardown;
  return { hub, ...r };
}

const gridCell = (text: RegExp) =>
  screen.getAllByRole('gridcell').find((c) => text.test(c.textContent ?? ''));

describe('matrix', () => {
  it('shows every status as text and icon, with counts as +a ~c -d and failure reasons', async () => {
    start();
    await screen.findByRole('grid');
    const text = screen.getByRole('grid').textContent ?? '';
    expect(text).toContain('✓ clean');
    expect(text).toContain('± changes +2 ~1 -3');
    expect(text).toContain('≈ drift (3)');
    expect(text).toContain('✕ failed: timeout');
    expect(text).toContain('locked: stuck-lock');
    expect(text).toContain('redaction failed: aws-key');
    expect(text).toContain('∅ no data');
    // colour comes with the words, never alone
    const badge = screen.getByText(/changes \+2/).closest('.badge');
    expect(badge?.classList.contains('st-changes')).toBe(true);
  });

  it('says how old each fact is and how long it took to arrive, with the absolute time on hover', async () => {
    start();
    await screen.findByRole('grid');
    const c = gridCell(/changes \+2/)!;
    expect(c.textContent).toContain('planned 3 h ago');
    expect(c.textContent).toContain('arrived 40 min later');
    const time = c.querySelector('time')!;
    expect(time.getAttribute('title')).toBe(
      `${iso(3 * HOUR)
        .slice(0, 19)
        .replace('T', ' ')} UTC`,
    );
    expect(time.getAttribute('datetime')).toBe(iso(3 * HOUR));
  });

  it('updates the age by itself as time passes', async () => {
    const { clock } = start();
    await screen.findByRole('grid');
    expect(gridCell(/changes \+2/)!.textContent).toContain('planned 3 h ago');
    act(() => clock.advance(2 * HOUR));
    expect(gridCell(/changes \+2/)!.textContent).toContain('planned 5 h ago');
  });

  it('marks stale cells, and marks cells stale once time passes twice their interval', async () => {
    const { clock } = start();
    await screen.findByRole('grid');
    expect(gridCell(/locked/)!.textContent).toContain('stale');
    expect(gridCell(/✓ clean/)!.textContent).not.toContain('stale');
    act(() => clock.advance(2 * HOUR));
    expect(gridCell(/✓ clean/)!.textContent).toContain('stale');
  });

  it('shows the last known state of an unreachable site, with since when', async () => {
    start();
    await screen.findByRole('grid');
    const c = gridCell(/changes \+1/)!;
    expect(c.textContent).toContain('last known — site unreachable since 3 d ago');
    expect(c.querySelector('.cell-body')!.classList.contains('is-unreachable')).toBe(true);
  });

  it('groups rows by site and pivots to sites × environments for one component', async () => {
    start();
    await screen.findByRole('grid');
    // rows sit one below the other (sizes carry units: Preact 11 does not add px)
    const tops = screen
      .getAllByRole('row')
      .slice(1)
      .map((r) => r.style.top);
    expect(tops[0]).toMatch(/^\d+px$/);
    expect(new Set(tops).size).toBe(tops.length);
    const headings = screen.getAllByRole('gridcell').filter((c) => c.classList.contains('g-sitehead'));
    expect(headings.map((h) => h.querySelector('.site-link')?.textContent)).toEqual([
      'lab',
      'polar-1',
      'ship-7',
    ]);
    fireEvent.click(screen.getAllByRole('rowheader').find((h) => h.textContent?.startsWith('network'))!);
    await screen.findByText(/network: sites × environments/);
    expect(window.location.search).toBe('?pivot=network');
    const rowheads = screen.getAllByRole('rowheader').map((h) => h.textContent);
    expect(rowheads).toEqual(['polar-1', 'ship-7']);
  });

  it('filters by status, site, environment, component text and stale, and keeps them in the URL', async () => {
    start('?status=changes');
    await screen.findByRole('grid');
    expect(screen.getByRole('grid').textContent).not.toContain('clean');
    expect(screen.getAllByText(/changes \+/)).toHaveLength(2);
    fireEvent.input(screen.getByLabelText('Component'), { target: { value: 'comp' } });
    expect(window.location.search).toBe('?q=comp&status=changes');
    expect(screen.getAllByText(/changes \+/)).toHaveLength(1);
    fireEvent.change(screen.getByLabelText('Status'), { target: { value: '' } });
    fireEvent.click(screen.getByLabelText('stale only'));
    expect(window.location.search).toBe('?q=comp&stale=1');
    expect(screen.getByText(/No cells match/)).toBeTruthy();
  });

  it('asks the hub for the matrix at an earlier time and pauses live updates', async () => {
    const { hub } = start();
    await screen.findByRole('grid');
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
    await screen.findByRole('grid');
    const first = screen.getAllByRole('gridcell').find((c) => c.tabIndex === 0)!;
    expect(first.classList.contains('g-sitehead')).toBe(true);
    first.focus();
    fireEvent.keyDown(first, { key: 'ArrowDown' });
    fireEvent.keyDown(document.activeElement!, { key: 'ArrowRight' });
    const focused = document.activeElement as HTMLElement;
    expect(focused.getAttribute('role')).toBe('gridcell');
    expect(focused.textContent).toContain('locked: stuck-lock');
    expect(screen.getAllByRole('gridcell').filter((c) => c.tabIndex === 0)).toHaveLength(1);
    fireEvent.keyDown(focused, { key: 'Enter' });
    await screen.findByRole('heading', { name: /lab \/ prod \/ dns/ });
    expect(window.location.search).toBe('?view=cell&site=lab&env=prod&comp=dns');
  });

  it('applies live cell updates and announces them politely', async () => {
    const { hub, clock } = start();
    await screen.findByRole('grid');
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
