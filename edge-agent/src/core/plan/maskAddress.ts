import type { PlanSummary } from '@driftline/protocol';
import { unescapeKey } from '../redact/foldText.js';
import { MaskSet, type MaskValue, maskText } from '../redact/maskValues.js';

/**
 * An address (`module.site["k"].aws_x.y["user-…"]`, `aws_x.n[3]`) with every variable value inside an
 * instance key replaced by its tag: `aws_iam_user.u["user-⟨db_password:3f9a1c⟩"]`. Names outside the
 * brackets are the configuration's own and stay; a key with nothing to mask keeps Terraform's spelling
 * byte for byte, and a masked one is written as a quoted string key. Keys are read as Terraform quotes
 * them (Go's `%q`), so a value with a quote, a tab or an escaped invisible character in it is found too.
 */
export function maskAddress(address: string, values: MaskSet): string {
  if (values.size === 0 || !address.includes('[')) return address;
  let out = '';
  let i = 0;
  while (i < address.length) {
    const c = address[i] as string;
    if (c !== '[') {
      out += c;
      i++;
      continue;
    }
    let j = i + 1;
    let raw: string;
    if (address[j] === '"') {
      j++;
      const start = j;
      while (j < address.length && address[j] !== '"') j += address[j] === '\\' ? 2 : 1;
      raw = address.slice(start, Math.min(j, address.length));
      j++; // the closing quote
    } else {
      const start = j;
      while (j < address.length && address[j] !== ']') j++;
      raw = address.slice(start, j);
    }
    const close = address[j] === ']' ? j + 1 : j;
    const text = unescapeKey(raw).text;
    const masked = maskText(text, values);
    out += masked === text ? address.slice(i, close) : `[${JSON.stringify(masked)}]`;
    i = close;
  }
  return out;
}

/** A summary whose addresses, previous addresses, module and check addresses carry no variable value. */
export function maskSummary(summary: PlanSummary, masks: readonly MaskValue[]): PlanSummary {
  if (masks.length === 0 || (!summary.resources && !summary.checks)) return summary;
  const values = new MaskSet(masks);
  const checks = summary.checks && {
    ...summary.checks,
    items: summary.checks.items.map((c) => ({ ...c, address: maskAddress(c.address, values) })),
  };
  if (!summary.resources) return { ...summary, ...(checks ? { checks } : {}) };
  return {
    ...summary,
    ...(checks ? { checks } : {}),
    resources: summary.resources.map((r) => {
      const m = { ...r, address: maskAddress(r.address, values) };
      if (r.module !== undefined) m.module = maskAddress(r.module, values);
      if (r.previousAddress !== undefined) m.previousAddress = maskAddress(r.previousAddress, values);
      return m;
    }),
  };
}
