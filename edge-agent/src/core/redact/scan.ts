import { decodeText } from './decode.js';
import { needlesOf } from './encodings.js';
import { maskMode } from './maskValues.js';
import { firstRuleHit, type SecretRule } from './rules.js';

/** A value that must never leave the site, and where it was found (for the rule name only). */
export interface SecretValue {
  value: string;
  /**
   * `variable`, `configuration`, `sensitive-attribute`, `sensitive-output`, `env`, `var-file`, with
   * `-key` when it is a map key. A source starting with `sensitive` is never exempted as an instance key.
   */
  source: string;
}

export type ScanResult = { ok: true } | { ok: false; hit: string };

/** Values shorter than this are not searched for: too many false alarms, too little secret. */
export const MIN_SECRET_LENGTH = 4;

/**
 * The plan's own identifiers, which may contain a value without leaking it (S7 in docs/architecture.md#invariants): lower-cased,
 * joined by NUL. `names` are resource types and names, module and output names, provider address
 * parts, component, environment and identifier-shaped attribute path segments; `instanceKeys` are
 * `for_each`/`count` keys and list indexes, which Terraform builds only from non-sensitive values.
 */
export interface PlanIdentifiers {
  names: string;
  instanceKeys: string;
}

/** Builds `PlanIdentifiers` from the names and keys a summary carries. */
export function planIdentifiers(names: Iterable<string>, instanceKeys: Iterable<string>): PlanIdentifiers {
  const join = (xs: Iterable<string>) => `\0${[...new Set(xs)].join('\0').toLowerCase()}\0`;
  return { names: join(names), instanceKeys: join(instanceKeys) };
}

const G = MIN_SECRET_LENGTH;

function addGrams(set: Set<string>, text: string): void {
  for (let i = 0; i + G <= text.length; i++) set.add(text.slice(i, i + G));
}

/**
 * Every gram of `needle`, tiled end to end (and the last one), is in the text: the cheap test before a
 * real search. Tiling rather than sampling matters for hex and digit-heavy needles, whose first and
 * last grams a text full of indexes and counts nearly always holds.
 */
function mayContain(grams: ReadonlySet<string>, needle: string): boolean {
  if (needle.length < G) return false;
  for (let i = 0; i + G <= needle.length; i += G) if (!grams.has(needle.slice(i, i + G))) return false;
  return grams.has(needle.slice(-G));
}

interface Views {
  raw: string;
  decoded: string;
  rawLower: string;
  decodedLower: string;
  /** 4-grams of both lower-cased views. */
  grams: Set<string>;
}

function views(text: string): Views {
  const decoded = decodeText(text);
  const rawLower = text.toLowerCase();
  const decodedLower = decoded === text ? rawLower : decoded.toLowerCase();
  const grams = new Set<string>();
  addGrams(grams, rawLower);
  if (decodedLower !== rawLower) addGrams(grams, decodedLower);
  return { raw: text, decoded, rawLower, decodedLower, grams };
}

function isSensitive(source: string): boolean {
  return source.startsWith('sensitive');
}

/**
 * A plain value equal to or inside one of the plan's identifiers does not leak by appearing there
 * (`ami = "primary"` on `aws_instance.test_primary`). A sensitive value is never exempt: the names come
 * from the same untrusted plan, and a module can put a secret into a resource name, an output name or a
 * map key (`nonsensitive()`), which must withhold the summary.
 */
function exempt(value: string, source: string, ids: PlanIdentifiers | undefined): boolean {
  if (!ids || isSensitive(source)) return false;
  const v = value.toLowerCase();
  if (v.includes('\0')) return false;
  if (ids.names.includes(v)) return true;
  // A variable's value is masked in instance keys (decision 210): one the masking should have caught
  // and that is still there fails closed. Shorter ones are masked as whole words only, so a longer key
  // holding one inside a word is not a hit.
  if (source.startsWith('variable') && maskMode(value) === 'substring') return false;
  return ids.instanceKeys.includes(v);
}

function found(v: Views, needle: string, caseless: boolean): boolean {
  if (!mayContain(v.grams, caseless ? needle : needle.toLowerCase())) return false;
  return caseless
    ? v.rawLower.includes(needle) || v.decodedLower.includes(needle)
    : v.raw.includes(needle) || v.decoded.includes(needle);
}

/** One entry per value, a sensitive source winning over a plain one. */
function distinct(secrets: readonly (SecretValue | string)[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const s of secrets) {
    const value = typeof s === 'string' ? s : s.value;
    const source = typeof s === 'string' ? 'value' : s.source;
    if (value.length < MIN_SECRET_LENGTH) continue;
    const had = out.get(value);
    if (had === undefined || (isSensitive(source) && !isSensitive(had))) out.set(value, source);
  }
  return out;
}

/**
 * Searches `text` for every known secret value and every secret shape. Fails closed: the first hit is
 * returned by rule name (`known-value-<source>` or the shape rule's name), never the value.
 *
 * Values are compared against the text as it is and decoded (`decodeText`), case-insensitively, and in
 * their encoded forms (`needlesOf`: hex, base64, base64url). A value found only inside the plan's own
 * identifiers (`ids`) is not a hit. Each search is prefiltered through the text's 4-grams, so thousands
 * of values against a large summary stay near linear in text size × values. Shape rules see the raw and
 * the decoded text, window by window (`ruleWindows`).
 */
export function scanForSecrets(
  text: string,
  secrets: readonly (SecretValue | string)[],
  rules: readonly SecretRule[],
  ids?: PlanIdentifiers,
): ScanResult {
  const values = distinct(secrets);
  if (values.size > 0 && text.length >= MIN_SECRET_LENGTH) {
    const v = views(text);
    for (const [value, source] of values) {
      const needles = needlesOf(value);
      const hit =
        needles.caseless.some((n) => found(v, n, true)) || needles.exact.some((n) => found(v, n, false));
      if (hit && !exempt(value, source, ids)) return { ok: false, hit: `known-value-${source}` };
    }
  }
  const rule = firstRuleHit(text, rules);
  if (rule) return { ok: false, hit: rule };
  if (rules.length > 0) {
    const decoded = decodeText(text);
    const decodedRule = decoded === text ? undefined : firstRuleHit(decoded, rules);
    if (decodedRule) return { ok: false, hit: decodedRule };
  }
  return { ok: true };
}
