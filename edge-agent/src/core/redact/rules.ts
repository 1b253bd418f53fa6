/**
 * Known secret shapes (DESIGN step 3, issue 3 4b). A rule has a kebab-case name, which is all that
 * is ever reported or logged on a hit; the matched text never is.
 */
export interface SecretRule {
  name: string;
  /** Returns true when `text` contains something of this shape. */
  test(text: string): boolean;
}

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

export const BUILTIN_RULES: readonly SecretRule[] = [
  re('aws-access-key-id', /\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b/),
  re('aws-secret-access-key', /aws.{0,20}?secret.{0,20}?[=:]\s*["']?[A-Za-z0-9/+=]{40}\b/i),
  re('private-key-block', /-----BEGIN[A-Z ]{0,30} PRIVATE KEY(?: BLOCK)?-----/),
  re('jwt', /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/),
  re('github-token', /\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})/),
  re('gitlab-token', /\bglpat-[A-Za-z0-9_-]{20,}/),
  re('slack-token', /\bxox[abposr]-[A-Za-z0-9-]{10,}/),
  re('slack-webhook', /hooks\.slack\.com\/services\/[A-Za-z0-9/]{20,}/),
  re('google-api-key', /\bAIza[0-9A-Za-z_-]{35}/),
  re('stripe-key', /\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}/),
  re('azure-account-key', /AccountKey=[A-Za-z0-9+/=]{20,}/),
  re('url-credentials', /[a-z][a-z0-9+.-]*:\/\/[^/\s:@]+:[^/\s@]{3,}@/i),
  // `name=value` with any value; `name: value` only when the value has a digit or symbol, so prose in
  // error messages ("token: must be set") does not trip it.
  re(
    'secret-assignment',
    /\b(?:password|passwd|pwd|secret|token|api[_-]?key|access[_-]?key|client[_-]?secret)(?:\s*=\s*["']?[^\s"'(),;<>{}[\]]{4,}|\s*:\s*["']?(?=[^\s"']*[0-9!@#$%^&*+/])[^\s"'(),;<>{}[\]]{6,})/i,
  ),
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
