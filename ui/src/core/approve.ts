import {
  type Approval,
  type ApprovalJourney,
  approvalClaimsFor,
  importPrivateKeyPem,
  publicKeyOf,
  type RunDetail,
  signApproval,
} from '@driftline/protocol';

/** How long an approval made in the dashboard stays valid: the choices offered, in ms. */
export const APPROVAL_LIFETIMES: readonly { label: string; ms: number }[] = [
  { label: '1 hour', ms: 3_600_000 },
  { label: '24 hours', ms: 86_400_000 },
  { label: '3 days', ms: 3 * 86_400_000 },
  { label: '7 days', ms: 7 * 86_400_000 },
];

/**
 * Whether a run can be approved at all: a finished plan that kept its plan file, of a known commit, that
 * would change something (approving a plan with nothing to apply applies nothing).
 */
export function approvable(run: RunDetail): boolean {
  const commit = run.commit ?? run.summary.git?.commit;
  const c = run.counts;
  const changes = run.status === 'changes' || (!!c && c.add + c.change + c.destroy > 0);
  return changes && !!run.summary.planFileSha256 && !!commit && /^([0-9a-f]{40}|[0-9a-f]{64})$/.test(commit);
}

/** Whether an approval of the run is being or has been applied: then there is nothing left to approve. */
export function applyStarted(approvals: readonly ApprovalJourney[]): boolean {
  return approvals.some((a) => a.state === 'applying' || a.state === 'applied');
}

export type Signed = { ok: true; approval: Approval } | { ok: false; reason: string };

/**
 * Signs an approval of `run` with the approver's private key, given as the text of a PKCS#8 PEM file
 * the person chose. Everything happens here, with WebCrypto Ed25519: the key is imported for signing
 * and dropped; only the signed approval leaves the browser.
 */
export async function signRunApproval(
  pem: string,
  run: RunDetail,
  o: { now: number; lifetimeMs: number },
): Promise<Signed> {
  const cannot = {
    ok: false,
    reason: 'this run kept no saved plan file of a known commit: it cannot be applied',
  } as const;
  if (!approvable(run)) return cannot;
  let privateKey: CryptoKey;
  try {
    privateKey = await importPrivateKeyPem(pem);
  } catch {
    return {
      ok: false,
      reason:
        'the chosen file is not an Ed25519 private key in PKCS#8 PEM (make one with `hub approver keygen --out approver.pem`)',
    };
  }
  const built = approvalClaimsFor(run, o);
  if (!built.ok) return cannot;
  return { ok: true, approval: await signApproval(built.claims, privateKey, await publicKeyOf(privateKey)) };
}
