import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  type ApprovalClaims,
  generateSigningKeyPair,
  MAX_APPROVAL_BYTES,
  publicKeyToText,
  signApproval,
} from '@driftline/protocol';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initAgentKey } from '../src/adapters/fs/agentKeys.js';
import { startAgent } from '../src/app.js';
import { parseConfig } from '../src/config.js';
import {
  type ApplyHarness,
  approve,
  claimsFor,
  doc,
  handled,
  planNow,
  scenario,
  serial,
  settles,
  startApplyAgent,
} from './helpers/applyAgent.js';
import { tempDir } from './helpers/storeFixtures.js';

let h: ApplyHarness;
let runId: string;
beforeAll(async () => {
  h = await startApplyAgent([
    { name: 'vpc', scenario: scenario('changes'), apply: '{ approvers: ["{A}"], refs: [main] }' },
    { name: 'dns', scenario: scenario('changes') },
  ]);
  runId = await planNow(h, 'vpc');
  await planNow(h, 'dns');
}, 120_000);
afterAll(() => h?.close());

/** Relays `approval` and returns the run's record once this approval changed it. */
async function refusal(approval: unknown, run = runId) {
  const before = h.agent.store.applyRecord(run)?.apply.updatedAt;
  await h.hub.queueApproval(approval);
  h.agent.loop.kick();
  return settles(h, run, (x) => x.updatedAt !== before);
}

const signedByA = (claims: ApprovalClaims) =>
  signApproval(claims, h.approverA.privateKey, h.approverA.publicKey);

describe('approvals the agent refuses: recorded with a reason, nothing applied', () => {
  it('an approver whose key the config does not pin', { timeout: 60_000 }, async () => {
    const a = await refusal(
      await signApproval(claimsFor(h, runId), h.approverB.privateKey, h.approverB.publicKey),
    );
    expect(a.state).toBe('refused');
    expect(a.reason).toMatch(/^unknown approver ed25519:/);
  });

  it('an approval the hub made: signed with the hub key, or with no approver signature at all', {
    timeout: 60_000,
  }, async () => {
    const hubSigned = await signApproval(claimsFor(h, runId), h.hub.keys.privateKey, h.hub.keys.publicKey);
    expect((await refusal(hubSigned)).reason).toMatch(/^unknown approver/);
    const unsigned = { claims: claimsFor(h, runId) };
    const a = await refusal(unsigned);
    expect(a.state).toBe('refused');
    expect(a.reason).toMatch(/^malformed: approver/);
  });

  it('an approval past its expiry, or signed longer ago than maxApprovalAgeS', {
    timeout: 60_000,
  }, async () => {
    const now = Date.now();
    const late = await refusal(await signedByA(claimsFor(h, runId, { expiresAt: now - 1000 })));
    expect(late.reason).toMatch(/^expired: at /);
    const old = await refusal(
      await signedByA(claimsFor(h, runId, { approvedAt: now - 2 * 86_400_000, expiresAt: now + 3600_000 })),
    );
    expect(old.reason).toMatch(
      /^expired: approved \d+ s ago by the agent's clock, more than apply\.maxApprovalAgeS 86400/,
    );
  });

  it('an approval still valid at headquarters but past its expiry on the agent clock (skew)', {
    timeout: 60_000,
  }, async () => {
    const claims = claimsFor(h, runId, { expiresAt: Date.now() + 3600_000 });
    h.skew.ms = 2 * 3600_000;
    try {
      const a = await refusal(await signedByA(claims));
      expect(a.reason).toMatch(/^expired: at /);
    } finally {
      h.skew.ms = 0;
    }
  });

  it('an approval naming another plan file hash', { timeout: 60_000 }, async () => {
    const a = await refusal(
      await signedByA(claimsFor(h, runId, { planFileSha256: 'f'.repeat(64) as never })),
    );
    expect(a.reason).toMatch(/^wrong hash: the approval names plan file ffffffffffff…/);
  });

  it('a ref apply.refs does not allow', { timeout: 60_000 }, async () => {
    const a = await refusal(await signedByA(claimsFor(h, runId, { ref: 'pr/1' as never })));
    expect(a.reason).toBe('ref not allowed: pr/1 is not in apply.refs of vpc');
  });

  it('a component without apply in the local config', { timeout: 60_000 }, async () => {
    const dnsRun = doc(h).cells['prod/dns']?.runId as string;
    const a = await refusal(await signedByA(claimsFor(h, dnsRun)), dnsRun);
    expect(a).toMatchObject({
      state: 'refused',
      reason: 'apply not enabled for prod/dns in the local config',
    });
  });

  it('an approval for another site', { timeout: 60_000 }, async () => {
    const a = await refusal(await signedByA(claimsFor(h, runId, { site: 'ship-8' as never })));
    expect(a.reason).toBe('other site: the approval is for ship-8, this agent is at ship-7');
  });

  it('malformed and oversized approvals', { timeout: 60_000 }, async () => {
    const good = await signedByA(claimsFor(h, runId));
    const big = await refusal({ ...good, padding: 'x'.repeat(MAX_APPROVAL_BYTES) });
    expect(big.reason).toMatch(/^oversized: \d+ bytes > 4096/);
    const tampered = { ...good, claims: { ...good.claims, expiresAt: good.claims.expiresAt + 1 } };
    expect((await refusal(tampered)).reason).toBe('bad signature: not signed by the approver it names');
    // No claims to name a run by: refused and logged, nothing recorded or applied.
    await h.hub.queueApproval('not an approval');
    await h.hub.queueApproval({ claims: { runId } });
    await handled(h);
    expect(h.agent.store.applyRecord(runId)?.apply.reason).toBe(
      'bad signature: not signed by the approver it names',
    );
  });

  it('after every refusal nothing was applied, the plan file is still there, and a valid approval applies', {
    timeout: 120_000,
  }, async () => {
    expect(serial(h, 'vpc')).toBe(0);
    expect(existsSync(join(h.dir, 'data', 'plans', `${runId}.tfplan`))).toBe(true);
    expect(doc(h).applies?.[runId]?.state).toBe('refused');
    // Each refused approval is listed once, with its own reason (decision 250).
    const refused = doc(h).applies?.[runId]?.refused ?? [];
    expect(new Set(refused.map((x) => x.approvalId)).size).toBe(refused.length);
    expect(refused.map((x) => x.reason)).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^unknown approver/),
        expect.stringMatching(/^malformed: approver/),
        expect.stringMatching(/^wrong hash: /),
        'ref not allowed: pr/1 is not in apply.refs of vpc',
      ]),
    );
    await approve(h, claimsFor(h, runId));
    const a = await settles(h, runId, (x) => x.state === 'applied');
    expect(a.approvalIds).toHaveLength(1);
    expect(serial(h, 'vpc')).toBe(1);
    expect(a.refused).toEqual(refused);
    // A refusal after the apply is listed for its approval and leaves the run applied.
    const late = { claims: claimsFor(h, runId) };
    const after = await refusal(late);
    expect(after).toMatchObject({ state: 'applied', approvalIds: a.approvalIds });
    expect(after.refused?.at(-1)).toMatchObject({
      approvalId: late.claims.approvalId,
      reason: expect.stringMatching(/^malformed: approver/),
    });
  });
});

describe('apply settings', () => {
  const base = (apply: string, extra = '') =>
    parseConfig(
      `site: s\nagent: a\ndataDir: ./d\nhubPublicKeyFile: ./k\nupstreams: [{ url: "http://x", tokenFile: ./t }]\ncomponents:\n  - name: c\n    workingDir: ./c\n    environments: [prod]${extra}\n    apply: ${apply}\n`,
      '/tmp',
    );
  const key = `ed25519:${'A'.repeat(43)}`;

  it('refuses a quorum the pinned keys can never meet, apply with command, and an unknown environment', () => {
    const q = base(`{ approvers: ["${key}"], quorum: 2 }`);
    expect(q.ok ? [] : q.problems).toEqual([
      'components[0].apply.quorum: quorum 2 can never be met by 1 distinct approver key(s): pin more keys or lower the quorum',
    ]);
    const c = base(`{ approvers: ["${key}"] }`, '\n    command: [plan.sh]');
    expect(c.ok ? [] : c.problems.join()).toContain('apply cannot be used with command');
    const e = base(`{ approvers: ["${key}"], environments: [staging] }`);
    expect(e.ok ? [] : e.problems.join()).toContain('environment "staging" is not one of');
    expect(base(`{ approvers: ["hub"] }`).ok).toBe(false);
  });

  it("will not start with the hub's own key pinned as an approver", async () => {
    const dir = tempDir();
    await initAgentKey(join(dir, 'data'));
    const hub = await generateSigningKeyPair();
    const hubKey = await publicKeyToText(hub.publicKey);
    writeFileSync(join(dir, 'hub.pub'), hubKey);
    writeFileSync(join(dir, 'token'), 't');
    const r = parseConfig(
      `site: s\nagent: a\ndataDir: ./data\nhubPublicKeyFile: ./hub.pub\nupstreams: [{ url: "http://127.0.0.1:9", tokenFile: ./token }]\ncomponents:\n  - name: c\n    workingDir: .\n    environments: [prod]\n    apply: { approvers: ["${hubKey}"] }\n`,
      dir,
    );
    if (!r.ok) throw new Error(r.problems.join());
    await expect(startAgent(r.config, { log: pino({ level: 'silent' }), schedule: false })).rejects.toThrow(
      /hub's public key is pinned as an approver/,
    );
  });
});
