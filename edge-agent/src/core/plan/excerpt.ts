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
import { type ScannedLock, scanLockLines } from './lockInfo.js';

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

/** A state-lock error's Lock Info, each field scanned alone (`scanLockLines`): kept whatever the excerpt. */
interface LockPart {
  lock?: ScannedLock['lock'];
  /** Rules that withheld a Lock Info field (its value reads as a note naming the rule). */
  lockWithheld?: string[];
}

export type ExcerptResult = LockPart &
  (
    | { excerpt?: undefined; withheld?: undefined }
    | { excerpt: string; withheld?: undefined }
    /** The excerpt is the fixed `withheldExcerpt(rule)` text: the allow-listed lines hit a scan rule. */
    | { excerpt: string; withheld: string }
  );

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
 * excerpt by `withheldExcerpt(rule)`. A `Lock Info:` block's values are first scanned one by one
 * (`lockInfo.ts`): one that hits reads as a note, the rest are also returned as `lock`, and its lines do
 * not count against `lines`.
 */
export function buildErrorExcerpt(
  out: ToolOutput,
  secrets: readonly SecretValue[],
  rules: readonly SecretRule[],
  opts: ExcerptOptions = {},
): ExcerptResult {
  const max = opts.max ?? 1000;
  const scanned = scanLockLines(candidateLines(out, opts), secrets, rules);
  const lines = scanned.lines;
  const lock: LockPart = {
    ...(scanned.lock ? { lock: scanned.lock } : {}),
    ...(scanned.withheld.length > 0 ? { lockWithheld: scanned.withheld } : {}),
  };
  if (lines.length === 0) return lock;
  const whole = scanForSecrets(lines.join('\n'), secrets, rules);
  if (!whole.ok) return { excerpt: withheldExcerpt(whole.hit), withheld: whole.hit, ...lock };
  const kept = lines.slice(-((opts.lines ?? 12) + scanned.lockLines));
  while (kept.length > 1 && kept.join('\n').length > max) kept.shift();
  const text = kept.join('\n');
  if (text.length > max) return lock;
  // Cutting can create a word boundary a shape rule needs; scan what actually leaves as well.
  const cut = scanForSecrets(text, secrets, rules);
  if (!cut.ok) return { excerpt: withheldExcerpt(cut.hit), withheld: cut.hit, ...lock };
  return { excerpt: text, ...lock };
}

/** Terraform's and OpenTofu's state-lock failure (`Error acquiring the state lock`), in any output. */
export function isLockError(...texts: (string | undefined)[]): boolean {
  return texts.some((t) => t !== undefined && /Error acquiring the state lock|Error locking state/i.test(t));
}
