import { act, fireEvent, screen, waitFor, within } from '@testing-library/preact';
import { afterEach, describe, expect, it } from 'vitest';
import { counts, NOW, planRequest, runDetail, runId, runItem, smallWorld } from './support/fixtures.js';
import { MockHub } from './support/mockHub.js';
import { renderApp } from './support/renderApp.js';

let teardown = () => {};
afterEach(() => teardown());

function hubWithRuns() {
  const hub = new MockHub(smallWorld());
  const key = { site: 'ship-7', environment: 'prod', component: 'compute' };
  const runs = [
    runItem({ n: 3, ...key, status: 'changes', counts: counts({ add: 2, change: 1, destroy: 3 }) }),
    runItem({ n: 5, ...key, status: 'failed', counts: null, reason: 'timeout' }),
    runItem({ n: 7, ...key, status: 'clean', unchanged: true }),
  ];
  hub.addRuns(runs, [runDetail(runs[0]!), runDetail(runs[1]!, false)]);
  return { hub, runs };
}

function start(hub: MockHub, search: string) {
  const r = renderApp(hub, search);
  teardown = r.teardown;
  return r;
}

describe('site view', () => {
  it('shows contact, clock offset, agents, queue, windows, upstream and the site cells', async () => {
    start(new MockHub(smallWorld()), '?view=site&site=polar-1');
    await screen.findByRole('heading', { name: /Site polar-1/ });
    const text = document.body.textContent ?? '';
    expect(text).toContain('unreachable');
    expect(text).toContain('Last contact3 d ago');
    expect(text).toContain('1 s ahead');
    expect(text).toContain('relay-dmz');
    expect(text).toContain('0 * * * *');
    const agentRow = screen.getByRole('row', { name: /a1/ });
    expect(agentRow.textContent).toContain('0.1.0');
    expect(agentRow.textContent).toContain('4');
    expect(agentRow.textContent).toContain('2 h ago');
    expect(screen.getByRole('link', { name: 'prod / network' }).getAttribute('href')).toBe(
      '?view=cell&site=polar-1&env=prod&comp=network',
    );
  });

  it('flags a clock estimate the hub held back, with what was claimed and through which peer', async () => {
    const world = smallWorld();
    world.sites = world.sites.map((x) => (x.site === 'polar-1' ? { ...x, clockHeldAgents: ['a1'] } : x));
    start(new MockHub(world), '?view=site&site=polar-1');
    await screen.findByRole('heading', { name: /Site polar-1/ });
    expect(document.body.textContent).toContain('estimate held back (a1)');
    const agentRow = screen.getByRole('row', { name: /a1/ });
    expect(agentRow.textContent).toContain('held back:');
    expect(agentRow.textContent).toContain('via relay-2');
  });

  it('says clearly when the site does not exist', async () => {
    start(new MockHub(smallWorld()), '?view=site&site=nowhere');
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toContain("no site 'nowhere'");
  });
});

describe('cell view', () => {
  it('lists the history of runs and filters it by status in the URL', async () => {
    const { hub } = hubWithRuns();
    start(hub, '?view=cell&site=ship-7&env=prod&comp=compute');
    await screen.findByText(/changes \+2 ~1 -3/, { selector: '.badge' });
    expect(screen.getAllByRole('row')).toHaveLength(4);
    expect(screen.getByText(/failed: timeout/, { selector: '.badge' })).toBeTruthy();
    expect(screen.getByText('(unchanged)')).toBeTruthy();
    fireEvent.change(screen.getByLabelText(/Show runs with status/), { target: { value: 'failed' } });
    await waitFor(() => expect(screen.getAllByRole('row')).toHaveLength(2));
    expect(window.location.search).toBe('?view=cell&site=ship-7&env=prod&comp=compute&status=failed');
    expect(hub.requests.map((r) => r.path)).toContain(
      'GET /api/cells/ship-7/prod/compute/runs?status=failed',
    );
  });

  it('adds runs that arrive live to the top of the history', async () => {
    const { hub } = hubWithRuns();
    start(hub, '?view=cell&site=ship-7&env=prod&comp=compute');
    await screen.findByText(/changes \+2 ~1 -3/, { selector: '.badge' });
    await waitFor(() => expect(hub.openStreams).toBe(1));
    act(() =>
      hub.emit({
        type: 'run-added',
        run: runItem({
          n: 1,
          site: 'ship-7',
          environment: 'prod',
          component: 'compute',
          status: 'drift',
          counts: counts({ drift: 2 }),
        }),
      }),
    );
    await screen.findByText(/drift \(2\)/, { selector: '.badge' });
    const runsTable = screen.getByRole('table', { name: 'Runs, newest first' });
    expect(within(runsTable).getAllByRole('row')[1]?.textContent).toContain('drift (2)');
  });

  it('files a plan request and follows its state to done', async () => {
    const { hub } = hubWithRuns();
    start(hub, '?view=cell&site=ship-7&env=prod&comp=compute');
    await screen.findByText(/changes \+2 ~1 -3/, { selector: '.badge' });
    fireEvent.click(screen.getByRole('button', { name: 'Plan now' }));
    await screen.findByText(/^Plan request asked \d\d:\d\d:\d\d, waiting for the site$/);
    expect(hub.requests.find((r) => r.path === 'POST /api/plan-requests')?.body).toEqual({
      site: 'ship-7',
      environment: 'prod',
      component: 'compute',
    });
    expect((screen.getByRole('button', { name: 'Plan now' }) as HTMLButtonElement).disabled).toBe(true);
    const base = { site: 'ship-7', environment: 'prod', component: 'compute', requestId: 'pr-1' };
    act(() =>
      hub.emit({ type: 'plan-request-updated', request: planRequest({ ...base, state: 'delivered' }) }),
    );
    act(() =>
      hub.emit({
        type: 'plan-request-updated',
        request: planRequest({ ...base, state: 'pending', unconfirmed: true }),
      }),
    );
    await screen.findByText(/unconfirmed: the agent has not said it arrived, sent again/);
    act(() =>
      hub.emit({ type: 'plan-request-updated', request: planRequest({ ...base, state: 'delivered' }) }),
    );
    await screen.findByText(/, delivered, waiting for the run$/);
    // The run that answers it started after the request was made: it is named as the answer.
    const asked = new Date(NOW - 60_000).toISOString();
    act(() =>
      hub.emit({
        type: 'plan-request-updated',
        request: planRequest({ ...base, requestedAt: asked, state: 'done', runId: runId(9) }),
      }),
    );
    await screen.findByText(new RegExp(`done: run ${runId(9)}$`));
    // A done request whose run started before it (the same plan came out) never names that run as the answer.
    act(() =>
      hub.emit({
        type: 'plan-request-updated',
        request: planRequest({ ...base, state: 'done', runId: runId(9) }),
      }),
    );
    await screen.findByText(new RegExp(`planned again, unchanged since run ${runId(9)}$`));
  });

  it('shows why a plan request was refused', async () => {
    const hub = new MockHub(smallWorld());
    start(hub, '?view=cell&site=ship-7&env=prod&comp=nothing-here');
    await screen.findByText(/No runs recorded/);
    fireEvent.click(screen.getByRole('button', { name: 'Plan now' }));
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toContain('no cell ship-7 prod/nothing-here');
  });
});

describe('run view', () => {
  it('keeps drift apart from proposed changes, with actions and changed attribute names', async () => {
    const { hub, runs } = hubWithRuns();
    start(hub, `?view=run&run=${runs[0]!.runId}`);
    await screen.findByRole('heading', { name: /Drift/ });
    const tables = screen.getAllByRole('table');
    expect(tables).toHaveLength(2);
    expect(tables[0]!.textContent).toContain('aws_security_group.web');
    expect(tables[0]!.textContent).toContain('ingress[0].cidr_blocks, tags.owner');
    expect(tables[0]!.textContent).not.toContain('aws_instance.app');
    expect(tables[1]!.textContent).toContain('aws_instance.app');
    expect(tables[1]!.textContent).toContain('delete, create');
    expect(tables[1]!.textContent).toContain('ami');
    expect(document.body.textContent).toContain('app_url');
  });

  it('shows the failure reason and excerpt, and says when the detail has not arrived', async () => {
    const { hub, runs } = hubWithRuns();
    start(hub, `?view=run&run=${runs[1]!.runId}`);
    await screen.findByRole('heading', { name: 'Reason' });
    expect(screen.getByText('timeout', { selector: 'code' })).toBeTruthy();
    expect(document.querySelector('pre.excerpt')?.textContent).toContain('timed out waiting for state lock');
    expect(screen.getByRole('note').textContent).toContain('has not arrived');
  });

  it('drills from the matrix to a cell and on to a run with links that work as URLs', async () => {
    const { hub, runs } = hubWithRuns();
    start(hub, '?view=matrix');
    await screen.findByRole('grid');
    fireEvent.click(screen.getAllByRole('gridcell').find((c) => /changes \+2/.test(c.textContent ?? ''))!);
    await screen.findByRole('link', { name: runs[0]!.runId });
    fireEvent.click(screen.getByRole('link', { name: runs[0]!.runId }));
    await screen.findByRole('heading', { name: `Run ${runs[0]!.runId}` });
    expect(window.location.search).toBe(`?view=run&run=${runs[0]!.runId}`);
    window.history.back();
    await screen.findByRole('button', { name: 'Plan now' });
  });
});
