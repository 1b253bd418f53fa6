import type { SecretRule } from './rules.js';

/** A value that must never leave the site, and where it was found (for the rule name only). */
export interface SecretValue {
  value: string;
  /** `variable`, `configuration`, `sensitive-attribute`, `sensitive-output`, `env`, … */
  source: string;
}

export type ScanResult = { ok: true } | { ok: false; hit: string };

/** Values shorter than this are not searched for: too many false alarms, too little secret. */
export const MIN_SECRET_LENGTH = 4;

function grams(text: string): Set<string> {
  const set = new Set<string>();
  for (let i = 0; i + MIN_SECRET_LENGTH <= text.length; i++) set.add(text.slice(i, i + MIN_SECRET_LENGTH));
  return set;
}

/**
 * Searches `text` for every known secret value and every secret shape. Fails closed: the first hit
 * is returned by rule name (`known-value-<source>` or the shape rule's name), never the value.
 * Values are prefiltered through the text's 4-grams, so thousands of values against a large
 * summary stay linear-ish rather than values × text.
 */
export function scanForSecrets(
  text: string,
  secrets: readonly (SecretValue | string)[],
  rules: readonly SecretRule[],
): ScanResult {
  if (secrets.length > 0) {
    const index = grams(text);
    for (const s of secrets) {
      const v = typeof s === 'string' ? s : s.value;
      if (v.length < MIN_SECRET_LENGTH) continue;
      const mid = Math.floor((v.length - MIN_SECRET_LENGTH) / 2);
      if (
        index.has(v.slice(0, MIN_SECRET_LENGTH)) &&
        index.has(v.slice(mid, mid + MIN_SECRET_LENGTH)) &&
        index.has(v.slice(-MIN_SECRET_LENGTH)) &&
        text.includes(v)
      ) {
        return { ok: false, hit: `known-value-${typeof s === 'string' ? 'value' : s.source}` };
      }
    }
  }
  for (const rule of rules) if (rule.test(text)) return { ok: false, hit: rule.name };
  return { ok: true };
}
