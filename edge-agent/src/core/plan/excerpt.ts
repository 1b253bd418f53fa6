import type { SecretRule } from '../redact/rules.js';
import { type SecretValue, scanForSecrets } from '../redact/scan.js';
import {
  CUSTOM_MESSAGE_DROPPED,
  type DiagnosticOptions,
  diagnosticLines,
  isCustomCondition,
  parseDiagnostics,
} from './diagnostics.js';
import { allowedLines } from './excerptLines.js';

/** What a failed run's tool printed: stdout may hold `-json` diagnostics, stderr plain text. */
export interface ToolOutput {
  stdout?: string;
  stderr: string;
}

export interface ExcerptOptions extends DiagnosticOptions {
  /** Characters kept at most. */
  max?: number;
  /** Lines kept at most (the last ones). */
  lines?: number;
}

export type ExcerptResult =
  | { excerpt?: undefined; withheld?: undefined }
  | { excerpt: string; withheld?: undefined }
  /** The excerpt is the fixed `withheldExcerpt(rule)` text: the allow-listed lines hit a scan rule. */
  | { excerpt: string; withheld: string };

/** What stands in for an excerpt that failed the scan: names the rule, never the value. */
export function withheldExcerpt(rule: string): string {
  return `(error output withheld: it matched the redaction rule ${rule})`;
}

/** The error lines to consider: allow-listed diagnostics when the tool gave any, else plain lines. */
function candidateLines(out: ToolOutput, opts: DiagnosticOptions): string[] {
  const diagnostics = [...parseDiagnostics(out.stdout ?? ''), ...parseDiagnostics(out.stderr)];
  if (diagnostics.length > 0) {
    const errors = diagnostics.filter((d) => d.severity === 'error');
    return (errors.length > 0 ? errors : diagnostics).flatMap((d) => diagnosticLines(d, opts));
  }
  return allowedLines(
    out.stderr,
    opts.keepCustomMessages ? undefined : { dropBlock: isCustomCondition, dropped: CUSTOM_MESSAGE_DROPPED },
  );
}

/**
 * A redacted excerpt of a failed tool's output (S7 in docs/architecture.md#invariants), built by allow-list: Terraform's JSON
 * diagnostics when present (`diagnostics.ts`), else the plain lines that carry no value
 * (`excerptLines.ts`). Everything allow-listed is scanned, whole, against the known values and shapes
 * *before* it is cut to the last `lines` lines and `max` characters, always at line boundaries, so a
 * cut can never leave half of a secret that the scan would have recognised whole. A hit replaces the
 * excerpt by `withheldExcerpt(rule)`.
 */
export function buildErrorExcerpt(
  out: ToolOutput,
  secrets: readonly SecretValue[],
  rules: readonly SecretRule[],
  opts: ExcerptOptions = {},
): ExcerptResult {
  const max = opts.max ?? 1000;
  const lines = candidateLines(out, opts);
  if (lines.length === 0) return {};
  const whole = scanForSecrets(lines.join('\n'), secrets, rules);
  if (!whole.ok) return { excerpt: withheldExcerpt(whole.hit), withheld: whole.hit };
  const kept = lines.slice(-(opts.lines ?? 12));
  while (kept.length > 1 && kept.join('\n').length > max) kept.shift();
  const text = kept.join('\n');
  if (text.length > max) return {};
  // Cutting can create a word boundary a shape rule needs; scan what actually leaves as well.
  const cut = scanForSecrets(text, secrets, rules);
  if (!cut.ok) return { excerpt: withheldExcerpt(cut.hit), withheld: cut.hit };
  return { excerpt: text };
}

/** Terraform's and OpenTofu's state-lock failure (`Error acquiring the state lock`), in any output. */
export function isLockError(...texts: (string | undefined)[]): boolean {
  return texts.some((t) => t !== undefined && /Error acquiring the state lock|Error locking state/i.test(t));
}
