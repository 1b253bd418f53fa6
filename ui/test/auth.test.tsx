import type { AuditEntry } from '@driftline/protocol';
import { act, fireEvent, screen, waitFor } from '@testing-library/preact';
import { afterEach, describe, expect, it } from 'vitest';
import { iso, MIN, smallWorld } from './support/fixtures.js';
import { MOCK_CSRF, MockHub } from './support/mockHub.js';
import { renderApp } from './support/renderApp.js';

let teardown = () => {};
afterEach(() => teardown());

function start(hub: MockHub, search = '') {
  const r = renderApp(hub, search);
  teardown = r.teardown;
  return r;
}

function signedOutHub() {
  const hub = new MockHub(smallWorld());
  hub.session = null;
  return hub;
}

async function signInWith(token: string) {
  const field = await screen.findByLabelText('Operator token');
  fireEvent.input(field, { target: { value: token } });
  fireEvent.click(screen.getByRole('button', { name: 'Sign in' }));
}

describe('signing in', () => {
  it('asks for a token when the hub knows no session, refuses a wrong one, and opens the dashboard', async () => {
    const hub = signedOutHub();
    start(hub);
    await screen.findByRole('heading', { name: 'Sign in to Driftline' });
    const field = screen.getByLabelText('Operator token') as HTMLInputElement;
    expect(field.type).toBe('password');
    await waitFor(() => expect(document.activeElement).toBe(field));
    expect(screen.queryByRole('grid')).toBeNull();
    expect(hub.openStreams).toBe(0);

    await signInWith('not-a-token');
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toContain('the hub does not know that token');
    expect(field.getAttribute('aria-invalid')).toBe('true');
    expect(document.activeElement).toBe(field);

    await signInWith('admin-token');
    await screen.findByRole('heading', { name: /Fleet overview/ });
    expect(document.querySelector('.who')?.textContent).toContain('Signed in as ada (admin)');
    expect(hub.requests.filter((r) => r.path === 'POST /api/session').map((r) => r.body)).toEqual([
      { token: 'not-a-token' },
      { token: 'admin-token' },
    ]);
    await waitFor(() => expect(hub.openStreams).toBe(1));
  });

  it('says the sign-in link was wrong or expired, and drops the marker once signed in', async () => {
    start(signedOutHub(), '?view=publications&signin=failed');
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toContain('That sign-in link was wrong or has expired');
    await signInWith('admin-token');
    await screen.findByRole('heading', { name: 'Publications to outposts' });
    expect(window.location.search).toBe('?view=publications');
  });

  it('signs out with the CSRF header, closes the live stream and shows the sign-in page', async () => {
    const hub = new MockHub(smallWorld());
    const r = start(hub);
    await screen.findByRole('heading', { name: /Fleet overview/ });
    await waitFor(() => expect(hub.openStreams).toBe(1));
    fireEvent.click(screen.getByRole('button', { name: 'Sign out' }));
    await screen.findByText('You have signed out.');
    expect(hub.requests.find((r) => r.path === 'DELETE /api/session')?.csrf).toBe(MOCK_CSRF);
    expect(hub.session).toBeNull();
    await waitFor(() => expect(hub.openStreams).toBe(0));
    expect(r.live.state()).toBe('signed-out');
    // Signing out is not a session that ended: nothing asks the hub again (each refusal is audited).
    const afterSignOut = hub.requests.slice(hub.requests.findIndex((x) => x.path === 'DELETE /api/session'));
    expect(afterSignOut.map((x) => x.path)).toEqual(['DELETE /api/session']);
  });
});

describe('writes and roles', () => {
  it('sends X-Driftline-CSRF on a write, and on no read', async () => {
    const hub = new MockHub(smallWorld());
    start(hub, '?view=cell&site=ship-7&env=prod&comp=network');
    await screen.findByRole('button', { name: 'Plan now' });
    fireEvent.click(screen.getByRole('button', { name: 'Plan now' }));
    await screen.findByText(/Plan request asked/);
    const post = hub.requests.find((r) => r.path === 'POST /api/plan-requests');
    expect(post?.csrf).toBe(MOCK_CSRF);
    const reads = hub.requests.filter((r) => r.path.startsWith('GET '));
    expect(reads.length).toBeGreaterThan(0);
    expect(reads.every((r) => r.csrf === null)).toBe(true);
  });

  it('keeps Plan now inert for a viewer and says which role it needs', async () => {
    const hub = new MockHub(smallWorld());
    hub.session = { user: 'vic', roles: ['viewer'], csrf: MOCK_CSRF, via: 'session' };
    start(hub, '?view=cell&site=ship-7&env=prod&comp=network');
    const button = await screen.findByRole('button', { name: 'Plan now' });
    expect(button.getAttribute('aria-disabled')).toBe('true');
    const reason = document.getElementById(button.getAttribute('aria-describedby') ?? '');
    expect(reason?.textContent).toContain('needs the operator role; you have viewer');
    fireEvent.click(button);
    expect(hub.requests.some((r) => r.path.startsWith('POST'))).toBe(false);
  });
});

describe('a session that ends mid-way', () => {
  it('returns to the sign-in page on a 401 and back to the same view after signing in', async () => {
    const hub = new MockHub(smallWorld());
    start(hub, '?view=cell&site=ship-7&env=prod&comp=network');
    await screen.findByRole('button', { name: 'Plan now' });
    act(() => hub.expireSession());
    fireEvent.click(screen.getByRole('button', { name: 'Plan now' }));
    await screen.findByRole('heading', { name: 'Sign in to Driftline' });
    expect(screen.getByRole('alert').textContent).toContain('Your session has ended');
    await signInWith('admin-token');
    await screen.findByRole('heading', { name: 'ship-7 / prod / network' });
    expect(window.location.search).toBe('?view=cell&site=ship-7&env=prod&comp=network');
  });

  it('notices through the live stream when the session ends in a quiet dashboard', async () => {
    const hub = new MockHub(smallWorld());
    const r = start(hub);
    await screen.findByRole('heading', { name: /Fleet overview/ });
    await waitFor(() => expect(hub.openStreams).toBe(1));
    act(() => hub.expireSession());
    await screen.findByText(/reconnecting/);
    act(() => r.clock.advance(1000));
    await screen.findByRole('heading', { name: 'Sign in to Driftline' });
    expect(screen.getByRole('alert').textContent).toContain('Your session has ended');
  });
});

describe('audit view', () => {
  const entry = (id: number, e: Partial<AuditEntry>): AuditEntry => ({
    id,
    at: iso(id * MIN),
    actor: 'ada',
    via: 'session',
    action: 'plan-request.create',
    target: 'ship-7/prod/network',
    outcome: 'ok',
    address: '127.0.0.1',
    ...e,
  });

  it('lists who did what, through which credential, to what, how it ended and when, linked from the header', async () => {
    const hub = new MockHub(smallWorld());
    hub.audit = [
      entry(2, {}),
      entry(5, {
        actor: 'anonymous',
        via: 'none',
        action: 'auth.fail',
        target: '/api/publications',
        outcome: 'denied',
        detail: 'no credential',
      }),
      entry(90, { actor: 'cli', via: 'cli', action: 'user.add', target: 'demo-admin', address: '' }),
    ];
    start(hub);
    await screen.findByRole('heading', { name: /Fleet overview/ });
    fireEvent.click(screen.getByRole('link', { name: 'Audit' }));
    const table = await screen.findByRole('table', { name: /Audit log/ });
    expect(window.location.search).toBe('?view=audit');
    expect(screen.getByRole('link', { name: 'Audit' }).getAttribute('aria-current')).toBe('page');
    const rows = screen.getAllByRole('row').slice(1);
    expect(rows).toHaveLength(3);
    expect(rows[0]?.textContent).toContain('2 min ago');
    expect(rows[0]?.textContent).toContain('ada');
    expect(rows[0]?.textContent).toContain('plan-request.create');
    expect(rows[0]?.textContent).toContain('ship-7/prod/network');
    expect(rows[1]?.textContent).toMatch(
      /anonymous.*none.*auth\.fail.*\/api\/publications.*denied — no credential/,
    );
    expect(rows[2]?.textContent).toContain('1 h ago');
    expect(table.textContent).toContain('user.add');
  });

  it('pages back through older entries', async () => {
    const hub = new MockHub(smallWorld());
    hub.audit = Array.from({ length: 130 }, (_, i) => entry(130 - i, { target: `t-${130 - i}` }));
    start(hub, '?view=audit');
    await screen.findByRole('table', { name: /Audit log/ });
    expect(screen.getAllByRole('row')).toHaveLength(101);
    fireEvent.click(screen.getByRole('button', { name: 'Older entries' }));
    await waitFor(() => expect(screen.getAllByRole('row')).toHaveLength(131));
    expect(hub.requests.map((r) => r.path)).toContain('GET /api/audit?limit=100&before=31');
    expect(screen.queryByRole('button', { name: 'Older entries' })).toBeNull();
  });
});
