import { ApprovalsResponseSchema, publicKeyToText } from '@driftline/protocol';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadOrCreateHubKey } from '../src/adapters/fs/hubKey.js';
import { Approvals } from '../src/core/Approvals.js';
import { keyPath } from '../src/dataDir.js';
import { ulidGen } from '../src/ports/IdGen.js';
import type { AgentSim } from './agentSim.js';
import {
  applySite,
  approvalsOnDownlink,
  approverKeys,
  claimsFor,
  planWithFile,
  reportApply,
  sign,
} from './applySim.js';
import { approvalRow } from './approvalStoreContract.js';
import { postJson, startHub, type TestHub } from './hubFixture.js';
import { addTestUser } from './users.js';

/**
 * An approval is `delivered` only when the agent's own signed document names it (decision 300): for an
 * agent that confirms what it receives, a relay's pull of the control bundle is not delivery.
 */
describe('approvals the agent confirms', () => {
  let h: TestHub;
  let sim: AgentSim;
  let runId: string;
  let approver: Record<string, string>;
  let keys: CryptoKeyPair;
  beforeEach(async () => {
    h = await startHub();
    sim = await applySite(h);
    sim.received(null); // the agent confirms what it receives (its `requests` map)
    runId = await planWithFile(h, sim);
    approver = { authorization: (await addTestUser(h.hub.store, 'ada', ['approver'])).authorization };
    keys = await approverKeys();
    const key = await publicKeyToText(keys.publicKey);
    await h.hub.store.commit({ approvers: [{ name: 'Ada Lovelace', key, addedAt: h.clock.now() }] });
  });
  afterEach(() => h.close());

  /** The hub's approvals as its sweep holds them (it sends unconfirmed ones again). */
  const approvals = async () => {
    const key = await loadOrCreateHubKey(keyPath(h.dir));
    return new Approvals({
      store: h.hub.store,
      clock: h.clock,
      ids: ulidGen(h.clock),
      hubPrivateKey: key.privateKey,
      hubPublicKeyText: key.publicKeyText,
    });
  };
  const journey = async () => {
    const res = await fetch(`${h.url}/api/approvals?site=mars-1&runId=${runId}`, { headers: approver });
    expect(res.status).toBe(200);
    return ApprovalsResponseSchema.parse(await res.json()).approvals[0];
  };
  const base = (approvalId: string, at: number) => ({
    runId: runId as never,
    environment: 'prod',
    component: 'app',
    ref: 'main',
    approvalIds: [approvalId],
    approvers: ['x'],
    quorum: 2,
    receivedAt: at,
    updatedAt: at,
  });

  it("is not delivered by a relay's pull, only by the agent's record, at the time the agent says", async () => {
    const approval = await sign(claimsFor(h, runId), keys);
    expect((await postJson(`${h.url}/api/approvals`, approval, approver)).status).toBe(201);
    h.clock.advance(60_000);
    expect(await approvalsOnDownlink(h)).toHaveLength(1); // a relay pulls it (and may eat it)
    expect(await journey()).toMatchObject({ state: 'submitted', deliveredAt: null });
    h.clock.advance(30_000);
    const at = h.clock.now();
    h.clock.advance(5_000);
    await reportApply(h, sim, { ...base(approval.claims.approvalId, at), state: 'waiting-quorum' });
    expect(await journey()).toMatchObject({
      state: 'waiting-quorum',
      deliveredAt: new Date(at).toISOString(),
    });
  });

  it('is delivered by a refusal the agent records, at the refusal’s time', async () => {
    const approval = await sign(claimsFor(h, runId), keys);
    await postJson(`${h.url}/api/approvals`, approval, approver);
    h.clock.advance(10_000);
    const at = h.clock.now();
    await reportApply(h, sim, {
      ...base('other', at),
      approvalIds: [],
      approvers: [],
      state: 'refused',
      refused: [{ approvalId: approval.claims.approvalId, reason: 'unknown approver', at }],
    });
    expect(await journey()).toMatchObject({ state: 'refused', deliveredAt: new Date(at).toISOString() });
  });

  it('is sent again at a site that holds 200 older approvals (the sweep once read only those)', async () => {
    // 200 approvals of the site, older ids, delivered long ago: a site's first 200 were all the sweep read
    const old = Array.from({ length: 200 }, (_, i) =>
      approvalRow(`00${String(i).padStart(24, '0')}`, `old-${i}`, 1, 'mars-1'),
    ).map((a) => ({ ...a, deliveredAt: 2 }));
    await h.hub.store.commit({ approvals: old });
    const approval = await sign(claimsFor(h, runId), keys);
    await postJson(`${h.url}/api/approvals`, approval, approver);
    const confirmBy = Date.parse((await journey())?.confirmBy ?? '');
    h.clock.advance(confirmBy - h.clock.now());
    const sweep = await approvals();
    expect((await sweep.resendUnconfirmed()).map((a) => a.approvalId)).toEqual([approval.claims.approvalId]);
  });

  it('is unconfirmed past N contact windows without the agent’s word, sent again, and not after it', async () => {
    const approval = await sign(claimsFor(h, runId), keys);
    await postJson(`${h.url}/api/approvals`, approval, approver);
    const j0 = await journey();
    expect(j0?.unconfirmed).toBe(false);
    const confirmBy = Date.parse(j0?.confirmBy ?? '');
    expect(confirmBy).toBeGreaterThan(h.clock.now());
    const seq = async () =>
      (await h.hub.store.readDownlink('mars-1', 0, 100)).find(
        (d) => d.requestId === approval.claims.approvalId,
      )?.seq;
    const first = await seq();
    const sweep = await approvals();
    expect(await sweep.resendUnconfirmed()).toEqual([]);
    h.clock.advance(confirmBy - h.clock.now());
    expect(await journey()).toMatchObject({ state: 'submitted', unconfirmed: true });
    expect((await sweep.resendUnconfirmed()).map((a) => a.approvalId)).toEqual([approval.claims.approvalId]);
    // On the downlink again (the same approval in a new bundle, replacing the old row), once per window.
    expect(await seq()).toBeGreaterThan(first as number);
    expect(await sweep.resendUnconfirmed()).toEqual([]);
    await reportApply(h, sim, {
      ...base(approval.claims.approvalId, h.clock.now()),
      state: 'waiting-quorum',
    });
    h.clock.advance(10 * (confirmBy - Date.parse(j0?.submittedAt ?? '')));
    expect(await sweep.resendUnconfirmed()).toEqual([]);
    expect(await journey()).toMatchObject({ state: 'waiting-quorum', unconfirmed: false });
  });
});
