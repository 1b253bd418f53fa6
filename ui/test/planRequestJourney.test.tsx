import { act, fireEvent, screen, within } from '@testing-library/preact';
import { afterEach, describe, expect, it } from 'vitest';
import { counts, iso, MIN, planRequest, runItem, smallWorld } from './support/fixtures.js';
import { MockHub } from './support/mockHub.js';
import { renderApp } from './support/renderApp.js';

let teardown = () => {};
afterEach(() => teardown());

const cell = { site: 'ship-7', environment: 'prod', component: 'compute' };

function start() {
  const hub = new MockHub(smallWorld());
  hub.addRuns([runItem({ n: 3, ...cell, status: 'changes', counts: counts({ add: 2 }) })], []);
  const r = renderApp(hub, '?view=cell&site=ship-7&env=prod&comp=compute');
  teardown = r.teardown;
  return hub;
}

/** What a person waiting on "Plan now" sees (docs/decisions/560-plan-request-states.md). */
describe('a plan request’s journey', () => {
  it('shows asked → at the relay → delivered → running → done as they arrive, each with its time', async () => {
    const hub = start();
    fireEvent.click(await screen.findByRole('button', { name: 'Plan now' }));
    await screen.findByText(/^Plan request asked \d\d:\d\d:\d\d, waiting for the site$/);
    const base = { ...cell, requestId: 'pr-1', requestedAt: iso(50 * MIN) };
    const emit = (over: Partial<Parameters<typeof planRequest>[0]>) =>
      act(() => hub.emit({ type: 'plan-request-updated', request: planRequest({ ...base, ...over }) }));
    const journey = () => screen.getByRole('list', { name: 'Plan request journey' });

    emit({ state: 'pending', relay: 'relay-1', relayAt: iso(40 * MIN) });
    await screen.findByText(/, at relay-1 \d\d:\d\d:\d\d, waiting for the site$/);
    expect(journey().textContent).toMatch(/asked 50 min ago.*at relay-1 40 min ago/);

    emit({ state: 'delivered', relay: 'relay-1', relayAt: iso(40 * MIN), deliveredAt: iso(30 * MIN) });
    await screen.findByText(/, delivered \d\d:\d\d:\d\d, waiting for the run$/);

    const running = {
      relay: 'relay-1',
      relayAt: iso(40 * MIN),
      deliveredAt: iso(30 * MIN),
      startedAt: iso(20 * MIN),
    };
    emit({ state: 'running', ...running });
    await screen.findByText(/, running since \d\d:\d\d:\d\d$/);
    expect(journey().textContent).toMatch(
      /asked 50 min ago.*at relay-1 40 min ago.*delivered 30 min ago.*running 20 min ago/,
    );
    // Still open: no second request while this one runs.
    expect((screen.getByRole('button', { name: 'Plan now' }) as HTMLButtonElement).disabled).toBe(true);

    emit({ state: 'done', ...running, doneAt: iso(10 * MIN), runId: '01JD0000000000000000000009' as never });
    await screen.findByText(/, done \d\d:\d\d:\d\d: /);
    expect(journey().textContent).toMatch(
      /asked 50 min ago.*at relay-1 40 min ago.*delivered 30 min ago.*running 20 min ago.*done 10 min ago/,
    );
    expect((screen.getByRole('button', { name: 'Plan now' }) as HTMLButtonElement).disabled).toBe(false);
  });

  it('shows an open request of the cell asked elsewhere, on load and as it moves', async () => {
    const hub = new MockHub(smallWorld());
    hub.addRuns([runItem({ n: 3, ...cell, status: 'changes', counts: counts({ add: 2 }) })], []);
    const base = { ...cell, requestId: 'pr-api', requestedAt: iso(50 * MIN) };
    hub.planRequests.push(
      planRequest({ ...base, state: 'pending', relay: 'relay-1', relayAt: iso(40 * MIN) }),
    );
    const r = renderApp(hub, '?view=cell&site=ship-7&env=prod&comp=compute');
    teardown = r.teardown;
    await screen.findByText(/, at relay-1 \d\d:\d\d:\d\d, waiting for the site$/);
    expect((screen.getByRole('button', { name: 'Plan now' }) as HTMLButtonElement).disabled).toBe(true);
    act(() =>
      hub.emit({
        type: 'plan-request-updated',
        request: planRequest({
          ...base,
          state: 'delivered',
          relay: 'relay-1',
          relayAt: iso(40 * MIN),
          deliveredAt: iso(30 * MIN),
        }),
      }),
    );
    await screen.findByText(/, delivered \d\d:\d\d:\d\d, waiting for the run$/);
  });

  it('ends with the state it ended in: expired, or refused by the agent', async () => {
    const hub = start();
    fireEvent.click(await screen.findByRole('button', { name: 'Plan now' }));
    await screen.findByText(/waiting for the site$/);
    const base = { ...cell, requestId: 'pr-1', requestedAt: iso(50 * MIN) };
    act(() =>
      hub.emit({
        type: 'plan-request-updated',
        request: planRequest({ ...base, state: 'expired', expiresAt: iso(5 * MIN) }),
      }),
    );
    await screen.findByText(/, expired \d\d:\d\d:\d\d before the site picked it up$/);
    const journey = screen.getByRole('list', { name: 'Plan request journey' });
    expect(journey.textContent).toMatch(/asked 50 min ago.*expired 5 min ago/);
    act(() =>
      hub.emit({
        type: 'plan-request-updated',
        request: planRequest({ ...base, state: 'refused', deliveredAt: iso(30 * MIN) }),
      }),
    );
    await screen.findByText(/, refused by the agent$/);
    expect(screen.getByRole('list', { name: 'Plan request journey' }).textContent).toMatch(
      /asked 50 min ago.*refused by the agent 30 min ago/,
    );
  });

  it('draws its steps with the component an approval’s journey uses', async () => {
    start();
    fireEvent.click(await screen.findByRole('button', { name: 'Plan now' }));
    await screen.findByText(/waiting for the site$/);
    const journey = screen.getByRole('list', { name: 'Plan request journey' });
    expect(journey.classList.contains('journey')).toBe(true);
    expect(
      within(journey)
        .getAllByRole('listitem')
        .map((li) => li.textContent),
    ).toEqual([expect.stringMatching(/^asked just now/)]);
  });
});
