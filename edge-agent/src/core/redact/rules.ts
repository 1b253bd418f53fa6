/**
 * Known secret shapes (step 3 of docs/architecture.md#the-trip). A rule has a kebab-case name, which is all that is ever reported
 * or logged on a hit; the matched text never is.
 *
 * Every built-in pattern runs in time linear in its input: no nested quantifiers, and every quantifier
 * that can fail after a long run is bounded, so a failing attempt from one start position looks at a
 * bounded number of characters. On top of that a rule never sees more than `RULE_WINDOW` characters at
 * once (`ruleWindows`), which also bounds what a configured pattern can cost.
 */
export interface SecretRule {
  name: string;
  /** Returns true when `text` contains something of this shape. */
  test(text: string): boolean;
}

/** The most characters one call of a rule's `test` is given. */
export const RULE_WINDOW = 4096;
/** How much consecutive windows overlap: longer than any shape a rule needs to see whole. */
export const RULE_OVERLAP = 512;

function re(name: string, pattern: RegExp): SecretRule {
  return { name, test: (text) => pattern.test(text) };
}

/** Shannon entropy in bits per character. */
export function entropy(s: string): number {
  const freq = new Map<string, number>();
  for (const ch of s) freq.set(ch, (freq.get(ch) ?? 0) + 1);
  let h = 0;
  for (const n of freq.values()) {
    const p = n / s.length;
    h -= p * Math.log2(p);
  }
  return h;
}

// A global scan: each character is visited once whatever the input.
const CANDIDATE = /[A-Za-z0-9+/_=-]{32,}/g;

/**
 * Long strings that look random: 32+ characters mixing upper case, lower case and digits with at least
 * 4.2 bits of entropy per character. Lower-case hex (commit ids, hashes) and UUIDs stay below it.
 */
const highEntropy: SecretRule = {
  name: 'high-entropy-string',
  test(text) {
    for (const m of text.matchAll(CANDIDATE)) {
      const s = m[0];
      if (/[A-Z]/.test(s) && /[a-z]/.test(s) && /[0-9]/.test(s) && entropy(s) >= 4.2) return true;
    }
    return false;
  },
};

/** The pattern rules by name: each regular expression is linear-time (see the file comment). */
export const BUILTIN_PATTERNS: readonly (readonly [string, RegExp])[] = [
  ['aws-access-key-id', /\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b/],
  ['aws-secret-access-key', /aws.{0,20}?secret.{0,20}?[=:]\s{0,8}["']?[A-Za-z0-9/+=]{40}\b/i],
  ['private-key-block', /-----BEGIN[A-Z ]{0,30} PRIVATE KEY(?: BLOCK)?-----/],
  ['jwt', /\beyJ[A-Za-z0-9_-]{8,512}\.eyJ[A-Za-z0-9_-]{8,2048}\.[A-Za-z0-9_-]{8}/],
  ['github-token', /\b(?:gh[pousr]_[A-Za-z0-9]{30}|github_pat_[A-Za-z0-9_]{22})/],
  ['gitlab-token', /\bglpat-[A-Za-z0-9_-]{20}/],
  ['slack-token', /\bxox[abposr]-[A-Za-z0-9-]{10}/],
  ['slack-webhook', /hooks\.slack\.com\/services\/[A-Za-z0-9/]{20}/],
  ['google-api-key', /\bAIza[0-9A-Za-z_-]{35}/],
  ['stripe-key', /\b[rs]k_(?:live|test)_[A-Za-z0-9]{16}/],
  ['azure-account-key', /AccountKey=[A-Za-z0-9+/=]{20}/],
  ['url-credentials', /[a-z][a-z0-9+.-]{0,31}:\/\/[^/\s:@]{1,256}:[^/\s@]{3,256}@/i],
  // `name=value` with any value; `name: value` only when the value has a digit or symbol, so prose in
  // error messages ("token: must be set") does not trip it.
  [
    'secret-assignment',
    /\b(?:password|passwd|pwd|secret|token|api[_-]?key|access[_-]?key|client[_-]?secret)(?:\s{0,8}=\s{0,8}["']?[^\s"'(),;<>{}[\]]{4}|\s{0,8}:\s{0,8}["']?(?=[^\s"']{0,64}[0-9!@#$%^&*+/])[^\s"'(),;<>{}[\]]{6})/i,
  ],
];

export const BUILTIN_RULES: readonly SecretRule[] = [
  ...BUILTIN_PATTERNS.map(([name, pattern]) => re(name, pattern)),
  highEntropy,
];

/** A configured extra pattern: `{ name, regex }` from `redaction.patterns`. */
export interface PatternSpec {
  name: string;
  regex: string;
}

/** The built-in rules followed by the configured extra patterns (named `custom-<name>`). */
export function compileRules(extra: readonly PatternSpec[] = []): SecretRule[] {
  return [...BUILTIN_RULES, ...extra.map((p) => re(`custom-${p.name}`, new RegExp(p.regex)))];
}

/**
 * `text` cut into windows of at most `RULE_WINDOW` characters, each overlapping the next by
 * `RULE_OVERLAP`, so that a rule's cost is bounded per window and a shape shorter than the overlap is
 * always seen whole in one of them.
 */
export function ruleWindows(text: string): string[] {
  if (text.length <= RULE_WINDOW) return [text];
  const out: string[] = [];
  const step = RULE_WINDOW - RULE_OVERLAP;
  for (let at = 0; ; at += step) {
    out.push(text.slice(at, at + RULE_WINDOW));
    if (at + RULE_WINDOW >= text.length) return out;
  }
}

/** The first rule whose shape is in `text`, testing window by window. */
export function firstRuleHit(text: string, rules: readonly SecretRule[]): string | undefined {
  if (rules.length === 0) return undefined;
  const windows = ruleWindows(text);
  for (const rule of rules) for (const w of windows) if (rule.test(w)) return rule.name;
  return undefined;
}

const BRACE_QUANTIFIER = /^\{\d+(?:,\d*)?\}/;

/**
 * Whether a regular expression source repeats (`*`, `+`, `{n,}`) a group that itself holds a quantifier
 * (`(a+)+`, `(?:x*y)*`) or an alternation (`(a|aa)+`, whose alternatives may overlap): the shapes that
 * make backtracking engines take exponential time. A configured pattern with one is refused; a character
 * class (`[ab]+`) says the same without the risk. `?` alone outside is harmless and allowed.
 */
export function nestedQuantifier(source: string): boolean {
  const groups: boolean[] = [false];
  let i = 0;
  const quantifierAt = (j: number): 'bounded' | 'unbounded' | null => {
    const c = source[j];
    if (c === '*' || c === '+') return 'unbounded';
    if (c === '?') return 'bounded';
    if (c === '{' && BRACE_QUANTIFIER.test(source.slice(j, j + 24))) return 'unbounded';
    return null;
  };
  while (i < source.length) {
    const c = source[i] as string;
    if (c === '\\') {
      i += 2;
      continue;
    }
    if (c === '[') {
      i++;
      while (i < source.length && source[i] !== ']') i += source[i] === '\\' ? 2 : 1;
      i++;
      continue;
    }
    if (c === '(') {
      groups.push(false);
      i++;
      if (source[i] === '?') i++; // (?: (?= (?! (?<name> — the `?` is syntax, not a quantifier
      continue;
    }
    if (c === ')') {
      const inner = groups.pop() ?? false;
      if (groups.length === 0) groups.push(false);
      i++;
      if (inner && quantifierAt(i) === 'unbounded') return true;
      if (inner) groups[groups.length - 1] = true;
      continue;
    }
    if (c === '|' || quantifierAt(i) !== null) groups[groups.length - 1] = true;
    i++;
  }
  return false;
}
