import { RunDetailSchema, type RunDetailState } from '@driftline/protocol';
import { screen } from '@testing-library/preact';
import { afterEach, describe, expect, it } from 'vitest';
import { counts, runDetail, runItem, smallWorld } from './support/fixtures.js';
import { MockHub } from './support/mockHub.js';
import { renderApp } from './support/renderApp.js';

let teardown = () => {};
afterEach(() => teardown());

const key = { site: 'ship-7', environment: 'prod', component: 'compute' };
/** One replacement, one drifted resource: Terraform says "Plan: 1 to add, 0 to change, 1 to destroy." */
const replaced = runItem({
  n: 3,
  ...key,
  status: 'changes',
  counts: counts({ add: 1, destroy: 1, replace: 1, drift: 1 }),
});

function open(detailState: RunDetailState, withResources: boolean) {
  const hub = new MockHub(smallWorld());
  hub.addRuns([replaced], [RunDetailSchema.parse({ ...runDetail(replaced, withResources), detailState })]);
  teardown = renderApp(hub, `?view=run&run=${replaced.runId}`).teardown;
}

describe('run view before its detail arrives', () => {
  it('says what the summary knows and that the detail is pending, never "no changes"', async () => {
    open('pending', false);
    await screen.findByRole('heading', { name: `Run ${replaced.runId}` });
    const text = document.body.textContent ?? '';
    expect(text).toContain('changes +1 ~0 -1 (1 replaced)');
    expect(text).toContain(
      '1 to add, 0 to change, 1 to destroy (1 replacement, counted in both add and destroy)',
    );
    expect(text).toContain('1 changed outside Terraform (drift)');
    const note = screen.getByRole('note');
    expect(note.textContent).toContain('has not arrived');
    expect(note.textContent).toContain('Transfer: pending');
    expect(text).toContain('app_url');
    expect(text).not.toContain('No changes proposed');
    expect(text).not.toContain('No drift found');
    expect(screen.queryAllByRole('table')).toHaveLength(0);
  });

  it('lists the addresses the summary names while the rest of the detail is pending', async () => {
    const hub = new MockHub(smallWorld());
    const withNames = { ...runDetail(replaced, true), detailAvailable: false, detailState: 'pending' };
    hub.addRuns([replaced], [RunDetailSchema.parse(withNames)]);
    teardown = renderApp(hub, `?view=run&run=${replaced.runId}`).teardown;
    await screen.findByRole('heading', { name: 'Addresses the summary names' });
    expect(screen.getByRole('list').textContent).toContain('aws_instance.app');
    expect(document.body.textContent).not.toContain('No changes proposed');
  });

  it('says where the pending detail is when the hub knows: uploaded to a relay, no receipt yet', async () => {
    const hub = new MockHub(smallWorld());
    const text =
      'detail: pending at ship-7 (uploaded to relay-1 at 2025-01-01T10:00:00.000Z, no receipt yet)';
    const detailPending = {
      site: 'ship-7',
      uploadedTo: 'relay-1',
      uploadedAt: '2025-01-01T10:00:00.000Z',
      text,
    };
    const run = { ...runDetail(replaced, false), detailState: 'pending', detailPending };
    hub.addRuns([replaced], [RunDetailSchema.parse(run)]);
    teardown = renderApp(hub, `?view=run&run=${replaced.runId}`).teardown;
    await screen.findByRole('heading', { name: `Run ${replaced.runId}` });
    expect(document.body.textContent).toContain(text);
  });

  it('says when the detail reached the hub but could not be read', async () => {
    open('unreadable', false);
    const note = await screen.findByRole('note');
    expect(note.textContent).toContain('could not be read');
    expect(document.body.textContent).not.toContain('No changes proposed');
  });

  it('points an unchanged run to the earlier identical plan instead of saying it has no detail', async () => {
    const hub = new MockHub(smallWorld());
    const same = { ...replaced, unchanged: true };
    hub.addRuns([same], [RunDetailSchema.parse({ ...runDetail(same, false), detailState: 'none' })]);
    teardown = renderApp(hub, `?view=run&run=${same.runId}`).teardown;
    const note = await screen.findByRole('note');
    expect(note.textContent).toContain("same plan as the cell's previous run");
    expect(document.body.textContent).not.toContain('No changes proposed');
  });

  it('shows the resource tables once the detail has arrived', async () => {
    open('arrived', true);
    await screen.findByRole('heading', { name: 'Proposed changes' });
    expect(screen.getAllByRole('table')[1]!.textContent).toContain('aws_instance.app');
    expect(screen.queryByRole('note')).toBeNull();
  });
});

describe('run view: masked addresses (decision 210)', () => {
  it('shows the masked address as it came and says why on hover, with the policy the run was made under', async () => {
    const hub = new MockHub(smallWorld());
    const detail = runDetail(replaced, true);
    const masked = 'aws_iam_user.u["user-\u27E8db_password:3f9a1c\u27E9"]';
    const withMask = {
      ...detail,
      detailState: 'arrived',
      summary: {
        ...detail.summary,
        redactionPolicy: '2',
        resources: [
          { address: masked, type: 'aws_iam_user', actions: ['create'], drift: false, changedAttributes: [] },
          {
            address: 'aws_iam_user.plain',
            type: 'aws_iam_user',
            actions: ['create'],
            drift: false,
            changedAttributes: [],
          },
        ],
      },
    };
    hub.addRuns([replaced], [RunDetailSchema.parse(withMask)]);
    teardown = renderApp(hub, `?view=run&run=${replaced.runId}`).teardown;
    await screen.findByRole('heading', { name: 'Proposed changes' });
    const code = screen.getByText(masked);
    expect(code.getAttribute('title')).toContain('value of var.db_password');
    expect(code.getAttribute('title')).toContain('redaction.publicVariables');
    expect(screen.getByText('aws_iam_user.plain').getAttribute('title')).toBeNull();
    expect(screen.getByText('policy 2')).toBeTruthy();
  });
});
