import type { PlanSummary } from '@driftline/protocol';
import { jsonUnescape } from '../redact/decode.js';
import { type PlanIdentifiers, planIdentifiers } from '../redact/scan.js';
import { KEY_PLACEHOLDER } from './changedPaths.js';

/** An HCL identifier: what Terraform allows for resource, module and output names. */
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_-]*$/;

/**
 * Splits an address or attribute path (`module.a["k"].aws_x.y[0]`, `tags.env`) into identifier
 * tokens (names) and bracketed keys, in one pass. A token that is not identifier-shaped is neither:
 * it stays plain text for the scan.
 */
function split(text: string, names: string[], keys: string[]): void {
  let token = '';
  const flush = () => {
    if (IDENTIFIER.test(token)) names.push(token);
    token = '';
  };
  let i = 0;
  while (i < text.length) {
    const c = text[i] as string;
    if (c === '.' || c === '/') {
      flush();
      i++;
    } else if (c === '[') {
      flush();
      let j = i + 1;
      if (text[j] === '"') {
        j++;
        let raw = '';
        while (j < text.length && text[j] !== '"') {
          raw += text[j] === '\\' ? `${text[j]}${text[j + 1] ?? ''}` : text[j];
          j += text[j] === '\\' ? 2 : 1;
        }
        keys.push(jsonUnescape(raw));
        j++;
      } else {
        const start = j;
        while (j < text.length && text[j] !== ']') j++;
        keys.push(text.slice(start, j));
      }
      i = j + 1;
    } else {
      token += c;
      i++;
    }
  }
  flush();
}

/**
 * The identifiers a summary carries (see `PlanIdentifiers`): names from types, addresses, modules,
 * providers, outputs, attribute paths, component and environment; keys from `["…"]`/`[n]`.
 */
export function summaryIdentifiers(summary: PlanSummary): PlanIdentifiers {
  const names: string[] = [summary.component, summary.environment, KEY_PLACEHOLDER];
  const keys: string[] = [];
  for (const o of summary.outputChanges ?? []) split(o, names, keys);
  for (const c of summary.checks?.items ?? []) split(c.address, names, keys);
  for (const r of summary.resources ?? []) {
    for (const s of [r.address, r.type, r.module, r.name, r.provider, r.previousAddress]) {
      if (s !== undefined) split(s, names, keys);
    }
    for (const p of r.changedAttributes) split(p, names, keys);
  }
  const placeholder = `[${KEY_PLACEHOLDER}]`;
  return planIdentifiers(
    names,
    keys.filter((k) => k !== KEY_PLACEHOLDER && k !== placeholder),
  );
}
