import { type GitInfoSchema, type PlanSummary, PlanSummarySchema, type Sha256 } from '@driftline/protocol';
import type { z } from 'zod';
import {
  type Fingerprint,
  maskValues,
  processFingerprint,
  REDACTION_POLICY,
  withoutTags,
} from '../redact/maskValues.js';
import { BUILTIN_RULES, type SecretRule } from '../redact/rules.js';
import { type SecretValue, scanForSecrets } from '../redact/scan.js';
import { collectSecretValues } from '../redact/secretValues.js';
import { allText, buildSummary, planDerivedText } from './buildSummary.js';
import { canonicalDetail, sha256Hex } from './canonical.js';
import { summariseChecks } from './checks.js';
import { summaryIdentifiers } from './identifiers.js';
import { maskSummary } from './maskAddress.js';
import { asPlanJson } from './planJson.js';
import { checkPlanLimits } from './planLimits.js';

export interface SummariseContext {
  component: string;
  environment: string;
  startedAt: string;
  finishedAt: string;
  git?: z.infer<typeof GitInfoSchema>;
  /** The ref planned, for code from the site's git mirror. */
  ref?: string;
  exitCode?: number;
  /** Attribute names to treat as sensitive on top of Terraform's markers (config `redaction.sensitiveAttributes`). */
  sensitiveAttributes?: readonly string[];
  /** Shape rules; defaults to the built-in ones. */
  rules?: readonly SecretRule[];
  /** Further values that must not leave (the component's environment variables, …). */
  extraSecrets?: readonly SecretValue[];
  /** Keep the author-written messages of failing checks (config `redaction.keepCustomMessages`). */
  keepCustomMessages?: boolean;
  /** Variables whose values may appear as they are (config `redaction.publicVariables`). */
  publicVariables?: readonly string[];
  /**
   * Makes the tag of a masked value: `hmacFingerprint(siteKey)` in the agent, so tags are stable across
   * runs. Default: a key made for this process (`processFingerprint`).
   */
  fingerprint?: Fingerprint;
}

export type SummariseResult =
  | {
      ok: true;
      /** What leaves the site. `redaction-failed` carries only names, times, status and the rule. */
      summary: PlanSummary;
      /** The canonical redacted detail whose sha256 is `summary.planHash`; absent when redaction failed. */
      canonical?: string;
      /** The rule that hit, when the scan failed closed. Log this name, never a value. */
      redactionHit?: string;
    }
  | {
      ok: false;
      reason: 'not-a-plan' | 'unsupported-format' | 'plan-too-deep' | 'plan-key-too-long';
      message: string;
    };

/** The only facts that leave when the scan hits. */
export function redactionFailed(
  ctx: { component: string; environment: string; startedAt: string; finishedAt: string },
  rule: string,
): PlanSummary {
  return {
    component: ctx.component,
    environment: ctx.environment,
    status: 'redaction-failed',
    reason: rule.slice(0, 200),
    startedAt: ctx.startedAt,
    finishedAt: ctx.finishedAt,
    redactionPolicy: REDACTION_POLICY,
  };
}

/**
 * Scans a finished summary (values from the plan and the environment against its plan-derived text,
 * less what only appears inside the plan's own identifiers; shapes against all of its text) and, when
 * clean, stamps `planHash`. Fails closed.
 */
export function sealSummary(
  summary: PlanSummary,
  secrets: readonly SecretValue[],
  rules: readonly SecretRule[],
  opts: { hash: boolean } = { hash: true },
): { ok: true; summary: PlanSummary; canonical: string } | { ok: false; hit: string } {
  const byValue = scanForSecrets(
    withoutTags(planDerivedText(summary)),
    secrets,
    [],
    summaryIdentifiers(summary),
  );
  if (!byValue.ok) return byValue;
  const byShape = scanForSecrets(withoutTags(allText(summary)), [], rules);
  if (!byShape.ok) return byShape;
  // Every result says which policy made it (decision 210); it is part of what the plan hash covers.
  const stamped: PlanSummary = { ...summary, redactionPolicy: REDACTION_POLICY };
  const canonical = canonicalDetail(stamped);
  const sealed: PlanSummary = opts.hash ? { ...stamped, planHash: sha256Hex(canonical) as Sha256 } : stamped;
  return { ok: true, summary: PlanSummarySchema.parse(sealed), canonical };
}

/** Plan JSON (already parsed) → a redacted, scanned, hashed `PlanSummary`. */
export function summarisePlan(planJson: unknown, ctx: SummariseContext): SummariseResult {
  const shaped = asPlanJson(planJson);
  if (!shaped.ok) return { ok: false, reason: shaped.reason, message: shaped.message };
  const bounded = checkPlanLimits(planJson);
  if (!bounded.ok) return bounded;
  const plan = shaped.plan;
  const sensitiveNames = new Set(ctx.sensitiveAttributes ?? []);
  const publicVariables = ctx.publicVariables ?? [];
  // Every root-module variable's value inside an instance key becomes its tag (decision 210).
  const masks = maskValues(plan.variables, publicVariables, ctx.fingerprint ?? processFingerprint());
  const secrets = [
    ...collectSecretValues(plan, sensitiveNames, publicVariables),
    ...(ctx.extraSecrets ?? []),
  ];
  const built = buildSummary(plan, { ...ctx, sensitiveNames });
  const checks = summariseChecks(plan.checks, {
    keepCustomMessages: ctx.keepCustomMessages === true,
    secrets,
    rules: ctx.rules ?? BUILTIN_RULES,
  });
  if (checks) built.checks = checks;
  const summary = maskSummary(built, masks);
  // Drift in brief travels in the document (the resources go in the detail blob): decision 421.
  const drifted = (summary.resources ?? []).filter((r) => r.drift).slice(0, 50);
  if (drifted.length > 0)
    summary.drifted = drifted.map((r) => ({
      address: r.address,
      type: r.type,
      attributes: r.changedAttributes.slice(0, 50),
    }));
  if (ctx.git) summary.git = ctx.git;
  if (ctx.ref) summary.ref = ctx.ref;
  if (ctx.exitCode !== undefined) summary.exitCode = ctx.exitCode;
  const sealed = sealSummary(summary, secrets, ctx.rules ?? BUILTIN_RULES);
  if (!sealed.ok) return { ok: true, summary: redactionFailed(ctx, sealed.hit), redactionHit: sealed.hit };
  return { ok: true, summary: sealed.summary, canonical: sealed.canonical };
}

/** Text → JSON, with a one-line reason when it is not JSON at all or is cut short. */
export function parsePlanText(
  text: string,
): { ok: true; value: unknown } | { ok: false; reason: 'not-a-plan'; message: string } {
  const trimmed = text.trimStart();
  if (trimmed === '')
    return { ok: false, reason: 'not-a-plan', message: 'the input is empty; expected plan JSON' };
  if (trimmed[0] !== '{') {
    return {
      ok: false,
      reason: 'not-a-plan',
      message: 'the input is not JSON (it does not start with "{"); expected plan JSON',
    };
  }
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (e) {
    // V8's message quotes the input around the error: never print it, it may hold a secret.
    const msg = e instanceof Error ? e.message : String(e);
    const at = /position (\d+)/.exec(msg)?.[1];
    const truncated =
      /end of (JSON )?input|Unterminated/i.test(msg) ||
      (at !== undefined && Number(at) >= text.trimEnd().length);
    return {
      ok: false,
      reason: 'not-a-plan',
      message: truncated
        ? 'the JSON ends early (truncated?); re-run `terraform show -json <planfile>`'
        : `the input is not valid JSON${at ? ` (error at byte ${at})` : ''}; expected plan JSON`,
    };
  }
}
