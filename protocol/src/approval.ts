import { z } from 'zod';
import { fromBase64, toBase64Url } from './bytes.js';
import { canonical } from './cbor.js';
import { RunIdSchema, Sha256Schema, SiteIdSchema } from './ids.js';
import { publicKeyFromText, publicKeyToText, signBytes, verifyBytes } from './keys.js';
import { CommitSchema, DEFAULT_REF, RefNameSchema } from './refs.js';
import { cryptoRandomBytes, monotonicUlid } from './ulid.js';

/**
 * An approval to apply one saved plan (S3 in docs/architecture.md#invariants: the hub cannot make a site change anything). A person
 * signs it with their own Ed25519 key, at headquarters (`hub approve`) or in the browser; the hub only
 * relays it. The agent applies only with a quorum of approvals from keys pinned in its own config, for
 * exactly the run and plan file named here, before `expiresAt`.
 */

/** What an approver signs: one run's saved plan at one site, until when. Times are ms since the epoch. */
export const ApprovalClaimsSchema = z.strictObject({
  v: z.literal(1),
  /** Unique per approval (a ULID): the same approval delivered twice counts once. */
  approvalId: z.string().regex(/^[0-9A-HJKMNP-TV-Z]{26}$/, 'must be a ULID'),
  site: SiteIdSchema,
  environment: z.string().min(1).max(63),
  component: z.string().min(1).max(63),
  ref: RefNameSchema,
  commit: CommitSchema,
  runId: RunIdSchema,
  /** sha256 of the saved plan file the run kept at the site (`PlanSummary.planFileSha256`). */
  planFileSha256: Sha256Schema,
  approvedAt: z.number().int().nonnegative(),
  expiresAt: z.number().int().nonnegative(),
});
export type ApprovalClaims = z.infer<typeof ApprovalClaimsSchema>;

/** A signed approval as it travels: the claims, the approver's public key, the signature. */
export const ApprovalSchema = z.strictObject({
  claims: ApprovalClaimsSchema,
  /** The approver's public key, `ed25519:<base64url>`: the agent must have it pinned. */
  approver: z.string().regex(/^ed25519:[A-Za-z0-9_-]{43}$/, "must be 'ed25519:' and 43 base64url characters"),
  /** Ed25519 signature over `approvalSigningBytes(claims)`, base64url. */
  signature: z.string().regex(/^[A-Za-z0-9_-]{86}$/, 'must be 86 base64url characters (64 bytes)'),
});
export type Approval = z.infer<typeof ApprovalSchema>;

/** The run an approval names, as `/api/runs/:runId` answers it (only the fields the claims take). */
export interface ApprovableRun {
  site: ApprovalClaims['site'];
  environment: string;
  component: string;
  runId: ApprovalClaims['runId'];
  ref?: string | null;
  commit?: string | null;
  summary: { planFileSha256?: ApprovalClaims['planFileSha256'] | null; git?: { commit?: string } | null };
}

/** Why a run cannot be approved: it kept no saved plan file, or it names no full commit id. */
export type ClaimsProblem = 'no-plan-file' | 'no-commit';

/**
 * The claims approving `run` from `now` for `lifetimeMs`: its site, cell, ref (the default when it
 * names none), commit (the run's, else its summary's), saved plan file, and a fresh approval id. The one
 * builder `hub approve` and the dashboard share, so both sign the same claims for the same run.
 */
export function approvalClaimsFor(
  run: ApprovableRun,
  o: { now: number; lifetimeMs: number },
): { ok: true; claims: ApprovalClaims } | { ok: false; problem: ClaimsProblem } {
  const planFileSha256 = run.summary.planFileSha256;
  if (!planFileSha256) return { ok: false, problem: 'no-plan-file' };
  const commit = run.commit ?? run.summary.git?.commit;
  if (!commit || !CommitSchema.safeParse(commit).success) return { ok: false, problem: 'no-commit' };
  return {
    ok: true,
    claims: {
      v: 1,
      approvalId: monotonicUlid(() => o.now, cryptoRandomBytes)(),
      site: run.site,
      environment: run.environment,
      component: run.component,
      ref: run.ref ?? DEFAULT_REF,
      commit,
      runId: run.runId,
      planFileSha256,
      approvedAt: o.now,
      expiresAt: o.now + o.lifetimeMs,
    },
  };
}

/** Largest approval accepted anywhere, as JSON bytes. */
export const MAX_APPROVAL_BYTES = 4096;

const DOMAIN = 'driftline-approval-v1\n';

/** The bytes an approver signs: a domain tag and the claims as canonical JSON (sorted keys). */
export function approvalSigningBytes(claims: ApprovalClaims): Uint8Array {
  return new TextEncoder().encode(DOMAIN + JSON.stringify(canonical(claims)));
}

/** Signs `claims` with an approver's private key (WebCrypto Ed25519: Node and browsers alike). */
export async function signApproval(
  claims: ApprovalClaims,
  privateKey: CryptoKey,
  publicKey: CryptoKey,
): Promise<Approval> {
  const sig = await signBytes(privateKey, approvalSigningBytes(claims));
  return { claims, approver: await publicKeyToText(publicKey), signature: toBase64Url(sig) };
}

export type ApprovalCheck = { ok: true; approval: Approval } | { ok: false; reason: string };

/**
 * Parses and verifies an approval against the approver keys `pinned` (each `ed25519:…`): its shape, its
 * size, a pinned approver, a valid signature. Expiry, site, ref and plan file are the caller's checks.
 */
export async function verifyApproval(value: unknown, pinned: readonly string[]): Promise<ApprovalCheck> {
  let size = 0;
  try {
    size = JSON.stringify(value)?.length ?? 0;
  } catch {
    return { ok: false, reason: 'malformed: not JSON data' };
  }
  if (size > MAX_APPROVAL_BYTES)
    return { ok: false, reason: `oversized: ${size} bytes > ${MAX_APPROVAL_BYTES}` };
  const parsed = ApprovalSchema.safeParse(value);
  if (!parsed.success) {
    const i = parsed.error.issues[0];
    return { ok: false, reason: `malformed: ${i?.path.join('.') || 'approval'}: ${i?.message ?? 'invalid'}` };
  }
  const a = parsed.data;
  if (!pinned.includes(a.approver))
    return { ok: false, reason: `unknown approver ${a.approver.slice(0, 20)}…` };
  const ok = await verifyBytes(
    await publicKeyFromText(a.approver),
    fromBase64(a.signature),
    approvalSigningBytes(a.claims),
  ).catch(() => false);
  return ok
    ? { ok: true, approval: a }
    : { ok: false, reason: 'bad signature: not signed by the approver it names' };
}
