import {
  type Approval,
  type ApprovalClaims,
  ApprovalClaimsSchema,
  ApprovalSchema,
  refMatches,
  verifyApproval,
} from '@driftline/protocol';
import type { ApplyRecord } from '../../ports/ApplyStore.js';
import type { KeptPlan } from '../../ports/PlanFiles.js';
import { findTarget, type PlanTarget } from '../plan/planTarget.js';
import type { ApplySettings, PlanSettings } from '../settings.js';

/** What checking an approval needs: the agent's identity, clock, config and what it keeps. */
export interface ApprovalContext {
  site: string;
  /** The agent's clock, ms: the only clock an expiry is judged by. */
  now: number;
  config: PlanSettings;
  record(runId: string): ApplyRecord | undefined;
  planFile(runId: string): Promise<KeptPlan | undefined>;
  laterRun(
    environment: string,
    component: string,
    cellRef: string | undefined,
    runId: string,
  ): string | undefined;
}

/**
 * `run`: the refusal concerns the run (its cell, ref, plan file), whoever signed; `approval`: only this
 * approval is refused (its age, its signer), approvals already counted still stand.
 */
export type RefusalScope = 'run' | 'approval';

export type ApprovalDecision =
  /** Refused; `claims` when the approval had a shape to name a run by. */
  | { kind: 'refused'; reason: string; scope: RefusalScope; claims?: ApprovalClaims }
  /** Already counted, or its run already applying or done: changes nothing. */
  | { kind: 'replay'; claims: ApprovalClaims; why: string }
  /** Valid: counts towards the quorum of its run. */
  | {
      kind: 'valid';
      approval: Approval;
      target: PlanTarget;
      apply: ApplySettings;
      plan: KeptPlan;
    };

/** States after which nothing an approval says changes a run. */
export const SETTLED = ['applying', 'applied', 'apply-failed'] as const;

/** The component's `apply` settings when they cover `environment`. */
export function applyConfigFor(config: PlanSettings, environment: string, component: string) {
  const t = findTarget(config, component, environment);
  const a = t?.component.apply;
  if (!t || !a || (a.environments && !a.environments.includes(environment))) return undefined;
  return { target: t, apply: a };
}

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * Checks one relayed approval, in this order (decision 090): its shape and size; the site; a replay; apply
 * enabled for the cell; the ref; the expiry and age on the agent's clock; a pinned approver's valid
 * signature; the saved plan file and its hash; no later plan of the cell. Never throws.
 */
export async function checkApproval(
  value: unknown,
  site: string,
  ctx: ApprovalContext,
): Promise<ApprovalDecision> {
  const shape = await verifyApproval(value, []);
  if (!shape.ok && /^(malformed|oversized)/.test(shape.reason)) {
    // Claims that parse on their own name the run the refusal is recorded for (a hub-made approval
    // without an approver's signature, say); an approval for another site is not recorded here.
    const claims = ApprovalClaimsSchema.safeParse((value as { claims?: unknown } | null)?.claims);
    const named = claims.success && claims.data.site === ctx.site ? { claims: claims.data } : {};
    return { kind: 'refused', reason: shape.reason, scope: 'approval', ...named };
  }
  const parsed = ApprovalSchema.safeParse(value);
  if (!parsed.success) return { kind: 'refused', reason: 'malformed: approval', scope: 'approval' };
  const a = parsed.data;
  const c = a.claims;
  const refuse = (reason: string, scope: RefusalScope = 'run'): ApprovalDecision => ({
    kind: 'refused',
    reason,
    scope,
    claims: c,
  });
  if (site !== ctx.site || c.site !== ctx.site)
    return refuse(`other site: the approval is for ${c.site}, this agent is at ${ctx.site}`);

  const rec = ctx.record(c.runId);
  if (rec?.apply.approvalIds.includes(c.approvalId))
    return { kind: 'replay', claims: c, why: 'this approval was counted already' };
  if (rec && (SETTLED as readonly string[]).includes(rec.apply.state))
    return { kind: 'replay', claims: c, why: `the run is ${rec.apply.state} already` };

  const cell = applyConfigFor(ctx.config, c.environment, c.component);
  if (!cell) return refuse(`apply not enabled for ${c.environment}/${c.component} in the local config`);
  if (!cell.apply.refs.some((p) => refMatches(p, c.ref)))
    return refuse(`ref not allowed: ${c.ref} is not in apply.refs of ${c.component}`);

  if (c.expiresAt < ctx.now)
    return refuse(`expired: at ${iso(c.expiresAt)}, the agent's clock says ${iso(ctx.now)}`, 'approval');
  const ageS = Math.floor((ctx.now - c.approvedAt) / 1000);
  if (ageS > cell.apply.maxApprovalAgeS)
    return refuse(
      `expired: approved ${ageS} s ago by the agent's clock, more than apply.maxApprovalAgeS ${cell.apply.maxApprovalAgeS}`,
      'approval',
    );

  const signed = await verifyApproval(value, cell.apply.approvers);
  if (!signed.ok) return refuse(signed.reason, 'approval');

  const plan = await ctx.planFile(c.runId);
  if (!plan) return refuse(`wrong hash: no saved plan file of run ${c.runId} at this site`);
  if (plan.sha256 !== c.planFileSha256)
    return refuse(
      `wrong hash: the approval names plan file ${c.planFileSha256.slice(0, 12)}…, run ${c.runId} saved ${plan.sha256.slice(0, 12)}…`,
    );
  const m = plan.meta;
  if (m.environment !== c.environment || m.component !== c.component || m.ref !== c.ref)
    return refuse(
      `wrong hash: run ${c.runId} planned ${m.environment}/${m.component}@${m.ref}, the approval names ${c.environment}/${c.component}@${c.ref}`,
    );
  if (m.commit && m.commit !== c.commit)
    return refuse(
      `wrong hash: run ${c.runId} planned commit ${m.commit.slice(0, 12)}, the approval names ${c.commit.slice(0, 12)}`,
    );

  const later = ctx.laterRun(m.environment, m.component, m.cellRef, c.runId);
  if (later) return refuse(`superseded by ${later}`);
  return { kind: 'valid', approval: signed.approval, target: cell.target, apply: cell.apply, plan };
}
