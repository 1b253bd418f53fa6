import type { CheckResult, CheckStatus, PlanChecks } from '@driftline/protocol';
import type { SecretRule } from '../redact/rules.js';
import { type SecretValue, scanForSecrets } from '../redact/scan.js';
import type { Json } from './planJson.js';

/** How many check entries a summary lists (failures first); the counts cover all of them. */
export const MAX_CHECK_ITEMS = 100;

/** Terraform's `address.kind` values for checkable objects (internal/command/jsonchecks). */
const KINDS = new Set(['check', 'resource', 'output_value', 'var']);
/** An address as Terraform displays it: identifiers, dots, brackets, quoted keys; no newline. */
const ADDRESS = /^[^\n\r]{1,300}$/;

/** Stands for a kept message that quoted a value the site must not send. */
export const CHECK_MESSAGE_WITHHELD =
  '(the message is withheld: it quoted a value that must not leave the site)';

function isObject(v: unknown): v is Record<string, Json> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function status(raw: unknown): { status: CheckStatus; errored?: true } {
  if (raw === 'pass') return { status: 'pass' };
  if (raw === 'fail') return { status: 'fail' };
  // The condition could not be evaluated: the operator must act as on a failure (decision 420).
  if (raw === 'error') return { status: 'fail', errored: true };
  return { status: 'unknown' };
}

/** The first problem message of a check's instances, read iteratively and bounded. */
function firstMessage(instances: unknown): string | undefined {
  if (!Array.isArray(instances)) return undefined;
  for (const inst of instances.slice(0, 1000)) {
    if (!isObject(inst) || !Array.isArray(inst.problems)) continue;
    for (const p of inst.problems.slice(0, 100))
      if (isObject(p) && typeof p.message === 'string' && p.message.trim() !== '')
        return p.message.replace(/\s+/g, ' ').trim().slice(0, 500);
  }
  return undefined;
}

export interface CheckOptions {
  /** Keep the author-written messages (config `redaction.keepCustomMessages`); they are still scanned. */
  keepCustomMessages?: boolean;
  /** Values that must not leave: a kept message quoting one is withheld. */
  secrets?: readonly SecretValue[];
  rules?: readonly SecretRule[];
}

/**
 * The plan's top-level `checks` (format 1.1+, Terraform 1.5+) summarised by allow-list: address, kind,
 * status; the author's message only when kept, scanned, and withheld on a hit. Undefined when the plan
 * has no `checks`.
 */
export function summariseChecks(raw: unknown, opts: CheckOptions = {}): PlanChecks | undefined {
  if (!Array.isArray(raw)) return undefined;
  const items: CheckResult[] = [];
  const counts = { pass: 0, fail: 0, unknown: 0 };
  for (const c of raw.slice(0, 10_000)) {
    if (!isObject(c) || !isObject(c.address)) continue;
    const display = c.address.to_display;
    if (typeof display !== 'string' || !ADDRESS.test(display)) continue;
    const s = status(c.status);
    counts[s.status]++;
    const item: CheckResult = { address: display, status: s.status };
    const kind = c.address.kind;
    if (typeof kind === 'string') item.kind = KINDS.has(kind) ? kind : 'unknown';
    if (s.errored) item.errored = true;
    if (opts.keepCustomMessages && s.status === 'fail') {
      const m = firstMessage(c.instances);
      if (m !== undefined)
        item.message = scanForSecrets(m, opts.secrets ?? [], opts.rules ?? []).ok
          ? m
          : CHECK_MESSAGE_WITHHELD;
    }
    items.push(item);
  }
  const order: Record<CheckStatus, number> = { fail: 0, unknown: 1, pass: 2 };
  items.sort((a, b) => order[a.status] - order[b.status] || (a.address < b.address ? -1 : 1));
  return { ...counts, items: items.slice(0, MAX_CHECK_ITEMS) };
}
