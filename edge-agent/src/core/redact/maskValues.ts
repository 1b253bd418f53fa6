import { createHmac, randomBytes } from 'node:crypto';
import type { Json } from '../plan/planJson.js';
import { fold, foldText, identity, type Mapped, percentView, sourceRange } from './foldText.js';

/**
 * The redaction policy a result is made under, recorded in every summary (`redactionPolicy`). Policy 1
 * (no field) let a non-sensitive variable's value appear in an instance key; policy 2 masks every
 * root-module variable value that is not named in `redaction.publicVariables`
 * (docs/decisions/210-variables-are-secret.md).
 */
export const REDACTION_POLICY = '2';

/** Folded values shorter than this are never masked: too common to be a secret, too common to match. */
export const MASK_MIN_LENGTH = 4;
/** Folded values this long or longer are masked wherever they occur, inside a word too and encoded. */
export const MASK_SUBSTRING_LENGTH = 8;
/** Words that are values of every kind of setting: never masked on their own. */
const COMMON = new Set(['true', 'false', 'null', 'none', 'yes', 'no', 'enabled', 'disabled']);
/** Values whose UTF-8 form is this long or longer are also looked for as hex and base64. */
const MIN_ENCODED_BYTES = 6;
/** Hex digits of the HMAC shown in a tag. */
const TAG_HEX = 6;

/** A value to mask and how: whole words only (`token`) or anywhere (`substring`). */
export interface MaskValue {
  variable: string;
  value: string;
  folded: string;
  mode: 'token' | 'substring';
  /** `⟨variable:3f9a1c⟩`. */
  tag: string;
  /** The value folded with `+` for spaces (query strings). */
  plusFolded: string;
  /** Lower-case hex of its UTF-8 bytes, when long enough to look for encoded. */
  hex?: string;
  /** Its base64 and base64url cores at each alignment (`base64Cores`). */
  base64: string[];
}

/** Makes the fingerprint of a value: a keyed hash, so equal values give equal tags and guesses cannot be checked. */
export type Fingerprint = (value: string) => string;

/** HMAC-SHA256 of the value under the site's key, first `TAG_HEX` hex digits. */
export function hmacFingerprint(key: Uint8Array): Fingerprint {
  return (value) =>
    createHmac('sha256', key)
      .update('driftline-mask\0')
      .update(value, 'utf8')
      .digest('hex')
      .slice(0, TAG_HEX);
}

let ephemeral: Fingerprint | undefined;
/**
 * For callers without a site key (a one-off `summarize` of a file, tests): a key made for this process,
 * so tags are stable only within it. The agent's runs always pass the site key.
 */
export function processFingerprint(): Fingerprint {
  ephemeral ??= hmacFingerprint(randomBytes(32));
  return ephemeral;
}

const utf8 = new TextEncoder();
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/;
const TAG = /\u27E8[A-Za-z_][A-Za-z0-9_-]{0,63}:[0-9a-f]{6}\u27E9/g;

/**
 * `text` with every tag emptied to `⟨⟩`, for the scan: a tag is the agent's own, and
 * `⟨db_password:3f9a1c⟩` would otherwise look like a password assignment to the shape rules. Six hex
 * digits cannot carry a secret of any length.
 */
export function withoutTags(text: string): string {
  return text.includes('\u27E8') ? text.replace(TAG, '\u27E8\u27E9') : text;
}

/** Whether a value is masked at all, and how (`MaskValue.mode`). */
export function maskMode(value: string): MaskValue['mode'] | undefined {
  const folded = foldText(value);
  if (folded.length < MASK_MIN_LENGTH || COMMON.has(folded)) return undefined;
  return folded.length >= MASK_SUBSTRING_LENGTH ? 'substring' : 'token';
}

function isObj(v: unknown): v is { [k: string]: Json } {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Every string, number and map key inside a value, walked with an explicit stack. */
function leaves(v: Json | undefined): string[] {
  const out: string[] = [];
  const stack: (Json | undefined)[] = [v];
  while (stack.length > 0) {
    const x = stack.pop();
    if (typeof x === 'string') out.push(x);
    else if (typeof x === 'number' && Number.isFinite(x)) out.push(String(x));
    else if (Array.isArray(x)) stack.push(...x);
    else if (isObj(x)) {
      for (const [k, y] of Object.entries(x)) {
        out.push(k);
        stack.push(y);
      }
    }
  }
  return out;
}

/**
 * The values to mask: every string, number and map key of every root-module variable (the plan's
 * `variables`, defaults filled in) not named in `publicVariables`, lines of multi-line values too. Longer
 * values first, so a value inside another is not masked in its place.
 */
export function maskValues(
  variables: Record<string, { value?: Json } | undefined> | undefined,
  publicVariables: readonly string[],
  fingerprint: Fingerprint,
): MaskValue[] {
  const open = new Set(publicVariables);
  const byValue = new Map<string, MaskValue>();
  const names = Object.keys(variables ?? {}).sort();
  for (const name of names) {
    if (open.has(name)) continue;
    const label = VARIABLE_NAME.test(name) ? name : 'variable';
    for (const leaf of leaves(variables?.[name]?.value)) {
      const parts = leaf.includes('\n') ? [leaf, ...leaf.split('\n').map((l) => l.trim())] : [leaf];
      for (const value of parts) {
        const mode = maskMode(value);
        if (!mode || byValue.has(value)) continue;
        const bytes = utf8.encode(value);
        const encoded = mode === 'substring' && bytes.length >= MIN_ENCODED_BYTES;
        byValue.set(value, {
          variable: label,
          value,
          folded: foldText(value),
          mode,
          tag: `\u27E8${label}:${fingerprint(value)}\u27E9`,
          plusFolded: foldText(value.replaceAll('+', ' ')),
          ...(encoded ? { hex: hexOf(bytes) } : {}),
          base64: encoded ? base64Cores(bytes) : [],
        });
      }
    }
  }
  return [...byValue.values()].sort((a, b) => b.folded.length - a.folded.length);
}

const WORD = /[\p{L}\p{N}]/u;
const B64 = /[A-Za-z0-9+/=_-]/;

function hexOf(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += b.toString(16).padStart(2, '0');
  return s;
}

/** base64 of the value at each of the three alignments, minus the characters that mix in neighbours. */
function base64Cores(bytes: Uint8Array): string[] {
  const out: string[] = [];
  for (let shift = 0; shift < 3; shift++) {
    const padded = new Uint8Array(shift + bytes.length);
    padded.set(bytes, shift);
    const start = Math.ceil((8 * shift) / 6);
    const end = Math.floor((8 * (shift + bytes.length)) / 6);
    const core = Buffer.from(padded).toString('base64').slice(start, end);
    if (core.length >= 8) out.push(core, core.replaceAll('+', '-').replaceAll('/', '_'));
  }
  return out;
}

type Span = [number, number, string];

type Index = Map<string, { v: MaskValue; needle: string }[]>;

function add(idx: Index, v: MaskValue, needle: string | undefined): void {
  if (needle === undefined || needle.length < MASK_MIN_LENGTH) return;
  const gram = needle.slice(0, MASK_MIN_LENGTH);
  const list = idx.get(gram);
  if (list) list.push({ v, needle });
  else idx.set(gram, [{ v, needle }]);
}

/**
 * The values to mask, indexed by the first four characters of each form they are looked for in, so a
 * text is searched in time linear in its length (plus the candidates its four-character grams name),
 * not in the number of values.
 */
export class MaskSet {
  private readonly folded: Index = new Map();
  private readonly plus: Index = new Map();
  private readonly hex: Index = new Map();
  private readonly base64: Index = new Map();
  readonly size: number;

  constructor(values: readonly MaskValue[]) {
    this.size = values.length;
    for (const v of values) {
      add(this.folded, v, v.folded);
      add(this.plus, v, v.plusFolded);
      add(this.hex, v, v.hex);
      for (const core of v.base64) add(this.base64, v, core);
    }
  }

  /** Where the values occur in `text`, as source ranges with their tags. */
  spans(text: string): Span[] {
    const out: Span[] = [];
    const base = identity(text);
    this.inView(fold(base), this.folded, out);
    if (text.includes('%')) this.inView(fold(percentView(base)), this.folded, out);
    // `+` for a space, as in query strings (the fold drops spaces, and here pluses, on both sides).
    if (text.includes('+')) this.inView(fold(identity(text.replaceAll('+', ' '))), this.plus, out);
    const lower = text.toLowerCase();
    if (lower.length === text.length) {
      this.encoded(text, lower, this.hex, out);
      this.encoded(text, text, this.base64, out);
    }
    return out;
  }

  private inView(view: Mapped, idx: Index, out: Span[]): void {
    const t = view.text;
    for (let i = 0; i + MASK_MIN_LENGTH <= t.length; i++) {
      const cands = idx.get(t.slice(i, i + MASK_MIN_LENGTH));
      if (!cands) continue;
      for (const { v, needle } of cands) {
        if (!t.startsWith(needle, i)) continue;
        const end = i + needle.length;
        if (v.mode === 'token' && (WORD.test(t[i - 1] ?? '') || WORD.test(t[end] ?? ''))) continue;
        const [a, b] = sourceRange(view, i, end);
        out.push([a, b, v.tag]);
      }
    }
  }

  /** Encoded forms: the whole run of base64 or hex characters around a hit is masked. */
  private encoded(text: string, hay: string, idx: Index, out: Span[]): void {
    if (idx.size === 0) return;
    for (let i = 0; i + MASK_MIN_LENGTH <= hay.length; i++) {
      const cands = idx.get(hay.slice(i, i + MASK_MIN_LENGTH));
      if (!cands) continue;
      for (const { v, needle } of cands) {
        if (!hay.startsWith(needle, i)) continue;
        let a = i;
        let b = i + needle.length;
        while (a > 0 && B64.test(text[a - 1] as string)) a--;
        while (b < text.length && B64.test(text[b] as string)) b++;
        out.push([a, b, v.tag]);
      }
    }
  }
}

/** `text` with every occurrence of a value replaced by its tag; unchanged (same string) when none. */
export function maskText(text: string, values: MaskSet): string {
  if (values.size === 0 || text === '') return text;
  const found = values.spans(text).sort((x, y) => x[0] - y[0] || y[1] - x[1]);
  if (found.length === 0) return text;
  let out = '';
  let at = 0;
  let i = 0;
  while (i < found.length) {
    const [a, , tag] = found[i] as Span;
    let end = (found[i] as Span)[1];
    i++;
    while (i < found.length && (found[i] as Span)[0] < end) {
      end = Math.max(end, (found[i] as Span)[1]);
      i++;
    }
    out += text.slice(at, a) + tag;
    at = end;
  }
  return out + text.slice(at);
}
