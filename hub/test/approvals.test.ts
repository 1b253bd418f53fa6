import {
  ApprovalJourneySchema,
  ApprovalsResponseSchema,
  publicKeyOf,
  publicKeyToText,
} from '@driftline/protocol';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadOrCreateHubKey } from '../src/adapters/fs/hubKey.js';
import { keyPath } from '../src/app.js';
import type { AgentSim } from './agentSim.js';
import {
  applySite,
  approvalsOnDownlink,
  approverKeys,
  claimsFor,
  PLAN_FILE,
  planWithFile,
  reportApply,
  sign,
} from './applySim.js';
import { postJson, startHub, type TestHub } from './hubFixture.js';
import { addTestUser } from './users.js';

describe('approvals at the hub', () => {
  let h: TestHub;
  let sim: AgentSim;
  let runId: string;
  let approver: Record<string, string>;
  let keys: CryptoKeyPair;
  beforeEach(async () => {
    h = await startHub();
    sim = await applySite(h);
    runId = await planWithFile(h, sim);
    approver = { authorization: (await addTestUser(h.hub.store, 'ada', ['approver'])).authorization };
    keys = await approverKeys();
    const key = await publicKeyToText(keys.publicKey);
    await h.hub.store.commit({ approvers: [{ name: 'Ada Lovelace', key, addedAt: h.clock.now() }] });
  });
  afterEach(() => h.close());

  const submit = (body: unknown, who = approver) => postJson(`${h.url}/api/approvals`, body, who);
  const error = async (res: Response) =>
    ((await res.json()) as { error: { code: string; message: string } }).error;

  it('queues a signed approval as hub-signed control traffic and answers 201 with its journey', async () => {
    const approval = await sign(claimsFor(h, runId), keys);
    await h.hub.store.commit({
      approvers: [{ name: 'Ada Lovelace', key: approval.approver, addedAt: h.clock.now() }],
    });
    const res = await submit(approval);
    expect(res.status).toBe(201);
    const journey = ApprovalJourneySchema.parse(await res.json());
    expect(journey).toMatchObject({
      approvalId: approval.claims.approvalId,
      state: 'submitted',
      approverName: 'Ada Lovelace',
      deliveredAt: null,
      runId,
    });
    const queued = await approvalsOnDownlink(h);
    expect(queued).toEqual([{ priority: 'control', agent: 'a1', approval }]);
    const audit = await h.hub.store.listAudit({ limit: 5 });
    expect(audit.find((a) => a.action === 'approval.submit')).toMatchObject({ actor: 'ada', outcome: 'ok' });
  });

  it('queues the same approval once however often it is submitted', async () => {
    const approval = await sign(claimsFor(h, runId), keys);
    expect((await submit(approval)).status).toBe(201);
    const again = await submit(approval);
    expect(again.status).toBe(200);
    expect(ApprovalJourneySchema.parse(await again.json()).approvalId).toBe(approval.claims.approvalId);
    expect(await approvalsOnDownlink(h)).toHaveLength(1);
  });

  it('lets approvers and admins submit, not viewers, operators or publishers', async () => {
    for (const [name, role, status] of [
      ['vic', 'viewer', 403],
      ['otto', 'operator', 403],
      ['pub', 'publisher', 403],
      ['root', 'admin', 201],
    ] as const) {
      const who = await addTestUser(h.hub.store, name, [role]);
      const res = await submit(await sign(claimsFor(h, runId), keys), { authorization: who.authorization });
      expect([name, res.status]).toEqual([name, status]);
    }
    expect(await approvalsOnDownlink(h)).toHaveLength(1);
  });

  it('refuses bad approvals with 422 saying what is wrong, and queues nothing', async () => {
    const good = await sign(claimsFor(h, runId), keys);
    const other = await approverKeys();
    const forged = { ...good, approver: await publicKeyToText(other.publicKey) };
    const cases: [string, unknown, RegExp][] = [
      ['malformed', { claims: { v: 1 } }, /malformed: .*approver|malformed: claims/],
      ['oversized', { ...good, padding: 'x'.repeat(5000) }, /oversized: \d+ bytes > 4096/],
      ['wrong signature', forged, /bad signature: not signed by the approver it names/],
      [
        'run not found',
        await sign(claimsFor(h, '01J00000000000000000000000'), keys),
        /no run '01J00000000000000000000000' at site 'mars-1'/,
      ],
      [
        'plan hash mismatch',
        await sign(claimsFor(h, runId, { planFileSha256: 'a'.repeat(64) as never }), keys),
        new RegExp(`plan file hash mismatch: .*sha256 ${PLAN_FILE}`),
      ],
      [
        'another component',
        await sign(claimsFor(h, runId, { component: 'db' }), keys),
        /is of prod\/app, not prod\/db/,
      ],
      [
        'another commit',
        await sign(claimsFor(h, runId, { commit: 'd'.repeat(40) }), keys),
        /planned commit c{40}, not d{40}/,
      ],
      [
        'expired',
        await sign(claimsFor(h, runId, { expiresAt: h.clock.now() - 1 }), keys),
        /expired at .*sign a new one/,
      ],
      [
        'unknown site',
        await sign(claimsFor(h, runId, { site: 'venus-2' as never }), keys),
        /site 'venus-2' has no enrolled agent/,
      ],
    ];
    for (const [what, body, message] of cases) {
      const res = await submit(body);
      const err = await error(res);
      expect([what, res.status, err.code]).toEqual([what, 422, 'unprocessable']);
      expect(err.message, what).toMatch(message);
    }
    expect(await approvalsOnDownlink(h)).toEqual([]);
    expect((await submit('not an approval' as never)).status).toBe(422);
  });

  it('refuses (422), before anything travels, an approval of a superseded, stale or already applied run, with the reason', async () => {
    const applied = (id: string, at: number) =>
      reportApply(h, sim, {
        runId: id as never,
        environment: 'prod',
        component: 'app',
        state: 'applied',
        approvalIds: [],
        approvers: [],
        receivedAt: at,
        startedAt: at,
        finishedAt: at,
        updatedAt: at,
      } as never);
    // superseded: the cell's latest plan is a later run that found something else
    h.clock.t += 60_000;
    const later = await planWithFile(h, sim, { planFileSha256: 'f'.repeat(64) });
    const old = await submit(await sign(claimsFor(h, runId), keys));
    expect(old.status).toBe(422);
    expect((await error(old)).message).toMatch(
      `approval refused: superseded by run '${later}' (planned ${new Date(h.clock.t).toISOString()}, changes): approve the cell's latest plan`,
    );
    // already applied: the agent's record says so
    await applied(later, h.clock.now());
    const again = await submit(
      await sign(claimsFor(h, later, { planFileSha256: 'f'.repeat(64) as never }), keys),
    );
    expect(again.status).toBe(422);
    expect((await error(again)).message).toMatch(
      new RegExp(`^approval refused: already applied: run '${later}' is applied at site 'mars-1'`),
    );
    // stale: the cell's latest plan was made before another run of the cell was applied
    h.clock.t += 60_000;
    const before = await planWithFile(h, sim);
    h.clock.t += 60_000;
    await applied(later, h.clock.now());
    const stale = await submit(await sign(claimsFor(h, before), keys));
    expect(stale.status).toBe(422);
    expect((await error(stale)).message).toMatch(
      new RegExp(
        `^approval refused: stale: run '${later}' of prod/app was applied at .* after run '${before}' was planned`,
      ),
    );
    expect(await approvalsOnDownlink(h)).toEqual([]);
    expect((await h.hub.store.listApprovals({ site: 'mars-1', limit: 10 })).length).toBe(0);
  });

  it('refuses an approval of a run that kept no plan file: apply is not enabled there', async () => {
    const plain = await planWithFile(h, sim, { planFileSha256: null });
    const res = await submit(await sign(claimsFor(h, plain), keys));
    expect(res.status).toBe(422);
    expect((await error(res)).message).toMatch(/kept no saved plan file: apply is not enabled for prod\/app/);
  });

  it("follows the journey: submitted, delivered by the relay's pull, then the agent's record", async () => {
    const approval = await sign(claimsFor(h, runId), keys);
    await submit(approval);
    const journey = async () => {
      const res = await fetch(`${h.url}/api/approvals?site=mars-1&runId=${runId}`, { headers: approver });
      expect(res.status).toBe(200);
      const [j] = ApprovalsResponseSchema.parse(await res.json()).approvals;
      return j;
    };
    expect((await journey())?.state).toBe('submitted');
    h.clock.advance(60_000);
    await approvalsOnDownlink(h);
    expect(await journey()).toMatchObject({
      state: 'delivered',
      deliveredAt: new Date(h.clock.now()).toISOString(),
    });
    h.clock.advance(60_000);
    const base = {
      runId: runId as never,
      environment: 'prod',
      component: 'app',
      ref: 'main',
      approvalIds: [approval.claims.approvalId],
      approvers: [approval.approver.slice(0, 60)],
      quorum: 1,
      receivedAt: h.clock.now(),
      updatedAt: h.clock.now(),
    };
    await reportApply(h, sim, { ...base, state: 'applying', startedAt: h.clock.now() });
    expect((await journey())?.state).toBe('applying');
    h.clock.advance(60_000);
    const next = await planWithFile(h, sim);
    await reportApply(h, sim, {
      ...base,
      state: 'applied',
      startedAt: h.clock.now() - 60_000,
      finishedAt: h.clock.now(),
      nextRunId: next as never,
      updatedAt: h.clock.now(),
    });
    expect(await journey()).toMatchObject({ state: 'applied', nextRunId: next, reason: null });
  });

  it("shows the agent's refusal with its reason", async () => {
    const approval = await sign(claimsFor(h, runId), keys);
    await submit(approval);
    await approvalsOnDownlink(h);
    await reportApply(h, sim, {
      runId: runId as never,
      environment: 'prod',
      component: 'app',
      state: 'refused',
      reason: 'unknown approver ed25519:…',
      approvalIds: [],
      approvers: [],
      refused: [
        { approvalId: approval.claims.approvalId, reason: 'unknown approver ed25519:…', at: h.clock.now() },
      ],
      receivedAt: h.clock.now(),
      updatedAt: h.clock.now(),
    });
    const res = await fetch(`${h.url}/api/approvals?site=mars-1`, { headers: approver });
    expect(ApprovalsResponseSchema.parse(await res.json()).approvals[0]).toMatchObject({
      state: 'refused',
      reason: 'unknown approver ed25519:…',
    });
    const bad = await fetch(`${h.url}/api/approvals?site=Not%20A%20Site`, { headers: approver });
    expect(bad.status).toBe(400);
  });

  it('shows each approval of a run in its own state, with its own reason, from what the agent recorded for it', async () => {
    const other = await approverKeys();
    await h.hub.store.commit({
      approvers: [{ name: 'Grace', key: await publicKeyToText(other.publicKey), addedAt: h.clock.now() }],
    });
    const first = await sign(claimsFor(h, runId), other);
    const second = await sign(claimsFor(h, runId), keys);
    const third = await sign(claimsFor(h, runId), keys);
    for (const a of [first, second, third]) expect((await submit(a)).status).toBe(201);
    await approvalsOnDownlink(h);
    h.clock.advance(60_000);
    // The agent refused the first (its key is not pinned there), applied with the second, and has not
    // named the third: the run is applied, and each approval says what became of it.
    await reportApply(h, sim, {
      runId: runId as never,
      environment: 'prod',
      component: 'app',
      state: 'applied',
      approvalIds: [second.claims.approvalId],
      approvers: [second.approver.slice(0, 60)],
      refused: [
        { approvalId: first.claims.approvalId, reason: 'unknown approver ed25519:Grace…', at: h.clock.now() },
      ],
      quorum: 1,
      receivedAt: h.clock.now(),
      startedAt: h.clock.now(),
      finishedAt: h.clock.now(),
      updatedAt: h.clock.now(),
    });
    const res = await fetch(`${h.url}/api/approvals?site=mars-1&runId=${runId}`, { headers: approver });
    const byId = new Map(
      ApprovalsResponseSchema.parse(await res.json()).approvals.map((j) => [j.approvalId, j]),
    );
    expect(byId.get(first.claims.approvalId)).toMatchObject({
      state: 'refused',
      reason: 'unknown approver ed25519:Grace…',
      approverName: 'Grace',
      startedAt: null,
    });
    expect(byId.get(second.claims.approvalId)).toMatchObject({ state: 'applied', reason: null });
    expect(byId.get(third.claims.approvalId)).toMatchObject({ state: 'delivered', reason: null });
  });

  it("refuses (422) an approval signed by a key no approver record holds, and one signed with the hub's key", async () => {
    const stranger = await sign(claimsFor(h, runId), await approverKeys());
    const res = await submit(stranger);
    expect(res.status).toBe(422);
    expect((await error(res)).message).toContain(
      `approval refused: no approver record holds the key ${stranger.approver}; an admin adds it with \`hub approver add NAME --key ${stranger.approver}\`, or sign with a listed approver's key (GET /api/approvers)`,
    );
    const hubKey = await loadOrCreateHubKey(keyPath(h.dir));
    expect(hubKey.created).toBe(false);
    const pair = { privateKey: hubKey.privateKey, publicKey: await publicKeyOf(hubKey.privateKey) };
    // Even listed as an approver, the hub's own key approves nothing.
    await h.hub.store.commit({
      approvers: [{ name: 'hub', key: hubKey.publicKeyText, addedAt: h.clock.now() }],
    });
    const own = await submit(await sign(claimsFor(h, runId), pair));
    expect(own.status).toBe(422);
    expect((await error(own)).message).toMatch(/^approval refused: signed with the hub's own key; /);
    expect(await approvalsOnDownlink(h)).toEqual([]);
  });

  it('lists approvers for viewers', async () => {
    await h.hub.store.commit({ approvers: [{ name: 'ada', key: `ed25519:${'A'.repeat(43)}`, addedAt: 0 }] });
    const viewer = await addTestUser(h.hub.store, 'vic', ['viewer']);
    const res = await fetch(`${h.url}/api/approvers`, { headers: { authorization: viewer.authorization } });
    expect((await res.json()).approvers).toContainEqual({
      name: 'ada',
      key: `ed25519:${'A'.repeat(43)}`,
      addedAt: '1970-01-01T00:00:00.000Z',
    });
  });
});
