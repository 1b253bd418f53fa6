import {
  exportPrivateKeyPem,
  generateSigningKeyPair,
  publicKeyToText,
  type RunDetail,
  verifyApproval,
} from '@driftline/protocol';
import { fireEvent, screen, waitFor, within } from '@testing-library/preact';
import { afterEach, describe, expect, it } from 'vitest';
import { HOUR, iso, MIN, NOW, runDetail, runId, runItem, smallWorld } from './support/fixtures.js';
import { MOCK_CSRF, MockHub } from './support/mockHub.js';
import { renderApp } from './support/renderApp.js';

let teardown = () => {};
afterEach(() => teardown());

const COMMIT = 'c'.repeat(40);
const PLAN_FILE = 'e'.repeat(64);
const cellKey = { site: 'ship-7', environment: 'prod', component: 'compute' };

/** A hub with one apply-enabled run (it kept its plan file) and one that did not; signed in with `roles`. */
function hubWith(roles: ('approver' | 'viewer' | 'admin')[]) {
  const hub = new MockHub(smallWorld());
  const kept = runItem({ n: 2, ...cellKey, status: 'changes', ref: 'main', commit: COMMIT });
  const plain = runItem({ n: 4, ...cellKey, status: 'changes' });
  const withFile: RunDetail = {
    ...runDetail(kept),
    summary: { ...runDetail(kept).summary, planFileSha256: PLAN_FILE as never, git: { commit: COMMIT } },
  };
  hub.addRuns([kept, plain], [withFile, runDetail(plain)]);
  hub.session = { user: 'ada', roles, csrf: MOCK_CSRF, via: 'session' };
  return { hub, kept: kept.runId, plain: plain.runId };
}

function start(hub: MockHub, run: string) {
  const r = renderApp(hub, `?view=run&run=${run}`);
  teardown = r.teardown;
  return r;
}

/** A key file as the person would choose it. */
async function keyFile() {
  const pair = await generateSigningKeyPair();
  const pem = await exportPrivateKeyPem(pair.privateKey);
  return { pem, file: new File([pem], 'approver.pem'), key: await publicKeyToText(pair.publicKey) };
}

function choose(file: File) {
  fireEvent.change(screen.getByLabelText('Approver key file (PKCS#8 PEM)'), { target: { files: [file] } });
}

describe('approving a run in the dashboard', () => {
  it('signs in the browser with the chosen key file and submits only the signed approval', async () => {
    const { hub, kept } = hubWith(['approver']);
    const { pem, file, key } = await keyFile();
    start(hub, kept);
    fireEvent.click(await screen.findByRole('button', { name: 'Approve…' }));
    choose(file);
    fireEvent.change(screen.getByLabelText('Valid for'), { target: { value: String(HOUR) } });
    fireEvent.click(screen.getByRole('button', { name: 'Sign and submit' }));
    await screen.findByText(/Approval [0-9A-Z]{26} submitted; the hub relays it to ship-7/);

    const post = hub.requests.find((r) => r.path === 'POST /api/approvals');
    expect(post?.csrf).toBe(MOCK_CSRF);
    const check = await verifyApproval(post?.body, [key]);
    expect(check.ok).toBe(true);
    if (!check.ok) return;
    expect(check.approval.claims).toMatchObject({
      site: 'ship-7',
      environment: 'prod',
      component: 'compute',
      ref: 'main',
      commit: COMMIT,
      runId: kept,
      planFileSha256: PLAN_FILE,
      approvedAt: NOW,
      expiresAt: NOW + HOUR,
    });
    const body = JSON.stringify(post?.body);
    const secret = pem.split('\n').slice(1, -2).join('');
    expect(body).not.toContain(secret);
    expect(Object.keys(post?.body as object).sort()).toEqual(['approver', 'claims', 'signature']);

    const list = await screen.findByRole('region', { name: 'Approvals' });
    expect(list.textContent).toContain('waiting at the hub for the site to pull it');
  });

  it('says so when the chosen file is not a private key, and submits nothing', async () => {
    const { hub, kept } = hubWith(['approver']);
    start(hub, kept);
    fireEvent.click(await screen.findByRole('button', { name: 'Approve…' }));
    choose(new File(['hello'], 'notes.txt'));
    fireEvent.click(screen.getByRole('button', { name: 'Sign and submit' }));
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toContain('not an Ed25519 private key in PKCS#8 PEM');
    expect(hub.requests.some((r) => r.path === 'POST /api/approvals')).toBe(false);
  });

  it('offers Approve… only to approvers, and only on runs that kept their plan file', async () => {
    const viewer = hubWith(['viewer']);
    start(viewer.hub, viewer.kept);
    await screen.findByRole('heading', { name: `Run ${viewer.kept}` });
    await waitFor(() =>
      expect(viewer.hub.requests.some((r) => r.path.startsWith('GET /api/approvals'))).toBe(true),
    );
    expect(screen.queryByRole('button', { name: 'Approve…' })).toBeNull();
    teardown();
    const admin = hubWith(['admin']);
    start(admin.hub, admin.plain);
    await screen.findByRole('heading', { name: `Run ${admin.plain}` });
    expect(screen.queryByRole('button', { name: 'Approve…' })).toBeNull();
  });

  it('offers Approve… only on a plan with changes, and not once an approval of it applies', async () => {
    const { hub, kept } = hubWith(['approver']);
    const run = hub.details.get(kept);
    if (!run) throw new Error('the fixture has no run detail');
    hub.details.set(kept, {
      ...run,
      status: 'clean',
      counts: { ...run.counts!, add: 0, change: 0, destroy: 0 },
    });
    start(hub, kept);
    await screen.findByRole('heading', { name: `Run ${kept}` });
    await waitFor(() => expect(hub.requests.some((r) => r.path.startsWith('GET /api/approvals'))).toBe(true));
    expect(screen.queryByRole('button', { name: 'Approve…' })).toBeNull();
    teardown();
    const applied = hubWith(['approver']);
    applied.hub.approvals = [
      {
        approvalId: '01JZ0000000000000000000009',
        site: 'ship-7' as never,
        environment: 'prod',
        component: 'compute',
        ref: 'main',
        commit: COMMIT,
        runId: applied.kept,
        approver: `ed25519:${'A'.repeat(43)}`,
        approverName: null,
        approvedAt: iso(HOUR),
        expiresAt: iso(-HOUR),
        submittedAt: iso(HOUR),
        deliveredAt: iso(HOUR),
        state: 'applying',
        reason: null,
        receivedAt: iso(HOUR),
        startedAt: iso(MIN),
        finishedAt: null,
        nextRunId: null,
      },
    ];
    start(applied.hub, applied.kept);
    const trail = await screen.findByRole('region', { name: 'Approvals' });
    expect(trail.textContent).toContain('applying');
    expect(screen.queryByRole('button', { name: 'Approve…' })).toBeNull();
  });

  it("lists each approval's journey with ages, the agent's reason and the next plan", async () => {
    const { hub, kept } = hubWith(['viewer']);
    const base = {
      site: 'ship-7' as never,
      environment: 'prod',
      component: 'compute',
      ref: 'main',
      commit: COMMIT,
      runId: kept,
      approver: `ed25519:${'A'.repeat(43)}`,
      approvedAt: iso(5 * HOUR),
      expiresAt: iso(-19 * HOUR),
      submittedAt: iso(5 * HOUR - MIN),
      reason: null,
      startedAt: null,
      finishedAt: null,
      nextRunId: null,
    };
    hub.approvals = [
      {
        ...base,
        approvalId: '01JZ0000000000000000000001',
        approverName: 'Ada Lovelace',
        deliveredAt: iso(3 * HOUR),
        receivedAt: iso(2 * HOUR),
        startedAt: iso(2 * HOUR),
        finishedAt: iso(HOUR),
        state: 'applied',
        nextRunId: runId(1),
      },
      {
        ...base,
        approvalId: '01JZ0000000000000000000002',
        approver: `ed25519:${'B'.repeat(43)}`,
        approverName: null,
        deliveredAt: iso(3 * HOUR),
        receivedAt: iso(2 * HOUR),
        state: 'refused',
        reason: 'unknown approver ed25519:BBBB…',
      },
    ];
    start(hub, kept);
    const list = await screen.findByRole('region', { name: 'Approvals' });
    const [applied, refused] = within(list).getAllByRole('article');
    expect(applied?.textContent).toContain('Ada Lovelace');
    expect(applied?.textContent).toMatch(
      /approved 5 h ago.*delivered 3 h ago.*applying 2 h ago.*applied 1 h ago/,
    );
    expect(within(applied as HTMLElement).getByRole('link', { name: runId(1) })).toBeTruthy();
    expect(refused?.textContent).toContain('refused by the agent — unknown approver ed25519:BBBB…');
    expect(refused?.textContent).toContain('unnamed approver');
  });

  it('says when the agent has not confirmed an approval and the hub sent it again (decision 300)', async () => {
    const { hub, kept } = hubWith(['viewer']);
    hub.approvals = [
      {
        approvalId: '01JZ0000000000000000000003',
        site: 'ship-7' as never,
        environment: 'prod',
        component: 'compute',
        ref: 'main',
        commit: COMMIT,
        runId: kept,
        approver: `ed25519:${'A'.repeat(43)}`,
        approverName: 'Ada Lovelace',
        approvedAt: iso(5 * HOUR),
        expiresAt: iso(-19 * HOUR),
        submittedAt: iso(5 * HOUR),
        deliveredAt: null,
        state: 'submitted',
        reason: null,
        receivedAt: null,
        startedAt: null,
        finishedAt: null,
        nextRunId: null,
        confirmBy: iso(2 * HOUR),
        unconfirmed: true,
      },
    ];
    start(hub, kept);
    const list = await screen.findByRole('region', { name: 'Approvals' });
    expect(list.textContent).toContain('unconfirmed: the agent has not said it arrived, sent again');
  });
});
