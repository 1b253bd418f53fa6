import { describe, expect, it } from 'vitest';
import { approvalClaimsFor, signApproval, verifyApproval } from '../src/approval.js';
import { RunIdSchema, Sha256Schema, SiteIdSchema } from '../src/ids.js';
import { generateSigningKeyPair, publicKeyToText } from '../src/keys.js';

const COMMIT = 'a'.repeat(40);
const SHA = Sha256Schema.parse('b'.repeat(64));
const run = {
  site: SiteIdSchema.parse('ship-7'),
  environment: 'prod',
  component: 'net',
  runId: RunIdSchema.parse('01JZ6Q3T8K9V2M4N5P6R7S8T9V'),
  commit: COMMIT,
  summary: { planFileSha256: SHA },
};

describe('approvalClaimsFor', () => {
  it('names the run, its plan file, its commit and the default ref, valid from now for the lifetime', () => {
    const r = approvalClaimsFor(run, { now: 1_000, lifetimeMs: 3_600_000 });
    expect(r).toMatchObject({
      ok: true,
      claims: {
        v: 1,
        site: 'ship-7',
        environment: 'prod',
        component: 'net',
        ref: 'main',
        commit: COMMIT,
        runId: run.runId,
        planFileSha256: SHA,
        approvedAt: 1_000,
        expiresAt: 3_601_000,
      },
    });
    if (r.ok) expect(r.claims.approvalId).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
  });

  it("takes the run's ref, and the summary's commit when the run names none", () => {
    const r = approvalClaimsFor(
      {
        ...run,
        ref: 'pr/42',
        commit: null,
        summary: { planFileSha256: SHA, git: { commit: 'c'.repeat(64) } },
      },
      { now: 5, lifetimeMs: 10 },
    );
    expect(r).toMatchObject({ ok: true, claims: { ref: 'pr/42', commit: 'c'.repeat(64) } });
  });

  it('refuses a run that kept no plan file, then one of no full commit id', () => {
    expect(approvalClaimsFor({ ...run, summary: {} }, { now: 1, lifetimeMs: 1 })).toEqual({
      ok: false,
      problem: 'no-plan-file',
    });
    expect(approvalClaimsFor({ ...run, commit: 'abc123' }, { now: 1, lifetimeMs: 1 })).toEqual({
      ok: false,
      problem: 'no-commit',
    });
  });

  it('builds claims that sign and verify against the pinned key', async () => {
    const keys = await generateSigningKeyPair();
    const r = approvalClaimsFor(run, { now: Date.now(), lifetimeMs: 60_000 });
    if (!r.ok) throw new Error(r.problem);
    const approval = await signApproval(r.claims, keys.privateKey, keys.publicKey);
    const check = await verifyApproval(approval, [await publicKeyToText(keys.publicKey)]);
    expect(check.ok).toBe(true);
  });
});
