import { screen, within } from '@testing-library/preact';
import { afterEach, describe, expect, it } from 'vitest';
import { runDetail, runItem, smallWorld } from './support/fixtures.js';
import { MockHub } from './support/mockHub.js';
import { renderApp } from './support/renderApp.js';

let teardown = () => {};
afterEach(() => teardown());

const key = { site: 'ship-7', environment: 'prod', component: 'compute' };
const ID = '5ba24658-9d93-e5d5-231e-bf92254a663e';
const lock = {
  id: ID,
  path: 'driftline-state/prod/compute/terraform.tfstate',
  operation: 'OperationTypeApply',
  who: 'ops@console-7f3a',
  version: '1.11.4',
  created: '2026-12-02 16:46:18.137954996 +0000 UTC',
  dir: '/srv/infra/compute',
};

const stuck = runItem({ n: 2, ...key, status: 'failed', counts: null, reason: 'stuck-lock', lock });

/** The cell's runs, newest first: `latest`, then a `locked` run of the same lock. */
function open(search: string, latest = stuck) {
  const hub = new MockHub(smallWorld());
  const earlier = runItem({ n: 4, ...key, status: 'locked', counts: null, reason: 'state-locked', lock });
  const detail = runDetail(latest, false);
  hub.addRuns([latest, earlier], [{ ...detail, summary: { ...detail.summary, lock } }]);
  teardown = renderApp(hub, search).teardown;
}

describe('a stuck state lock (decision 555)', () => {
  it("shows the cell's lock and the command that releases it at the site", async () => {
    open('?view=cell&site=ship-7&env=prod&comp=compute');
    const note = await screen.findByRole('region', { name: 'State lock' });
    expect(within(note).getByRole('heading').textContent).toBe('Stuck state lock');
    const text = note.textContent ?? '';
    for (const v of [ID, 'ops@console-7f3a', '2026-12-02 16:46:18.137954996 +0000 UTC', lock.path])
      expect(text).toContain(v);
    const command = within(note).getByRole('figure', { name: 'Command to release the lock' });
    expect(command.querySelector('code')?.textContent).toBe(
      `terraform -chdir=/srv/infra/compute force-unlock ${ID}`,
    );
  });

  it('shows no lock once the latest run got it', async () => {
    open('?view=cell&site=ship-7&env=prod&comp=compute', runItem({ n: 1, ...key, status: 'clean' }));
    await screen.findByRole('table', { name: 'Runs, newest first' });
    expect(screen.queryByRole('region', { name: 'State lock' })).toBeNull();
  });

  it("shows the run's lock on the run's page", async () => {
    open(`?view=run&run=${stuck.runId}`);
    const note = await screen.findByRole('region', { name: 'State lock' });
    expect(note.textContent).toContain(`force-unlock ${ID}`);
  });
});
