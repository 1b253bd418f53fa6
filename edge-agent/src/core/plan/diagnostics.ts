import { stripQuoted, valueFreeLine } from './excerptLines.js';
import { lockBlockReader } from './lockInfo.js';

/**
 * Terraform's and OpenTofu's machine-readable diagnostics (`plan -json`: one JSON object per line;
 * diagnostics have `type: "diagnostic"` and `diagnostic.{severity, summary, detail, range, snippet}`,
 * internal/command/views/json/diagnostic.go). Only severity, summary, detail and the range's file and
 * line are read; `snippet` (source lines and the values of the expressions in them) never is.
 */
export interface Diagnostic {
  severity: 'error' | 'warning';
  summary: string;
  detail: string;
  filename?: string;
  line?: number;
}

/** A JSON line longer than this is not read (diagnostics are short; plan messages can be long). */
const MAX_JSON_LINE = 64 * 1024;
/** Detail text read per diagnostic. */
const MAX_DETAIL = 4000;
const FILENAME = /^[A-Za-z0-9_./@+-]{1,200}$/;

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function asDiagnostic(line: string): Diagnostic | undefined {
  let msg: unknown;
  try {
    msg = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (!isObj(msg) || msg.type !== 'diagnostic' || !isObj(msg.diagnostic)) return undefined;
  const d = msg.diagnostic;
  if (d.severity !== 'error' && d.severity !== 'warning') return undefined;
  const out: Diagnostic = {
    severity: d.severity,
    summary: typeof d.summary === 'string' ? d.summary.slice(0, MAX_DETAIL) : '',
    detail: typeof d.detail === 'string' ? d.detail.slice(0, MAX_DETAIL) : '',
  };
  const range = d.range;
  if (isObj(range) && typeof range.filename === 'string' && FILENAME.test(range.filename)) {
    out.filename = range.filename;
    const start = range.start;
    if (isObj(start) && Number.isInteger(start.line)) out.line = start.line as number;
  }
  return out;
}

/** The diagnostics among the JSON lines of `text`; other lines (plain text, other messages) are skipped. */
export function parseDiagnostics(text: string): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line[0] !== '{' || line.length > MAX_JSON_LINE || !line.includes('"diagnostic"')) continue;
    const d = asDiagnostic(line);
    if (d) out.push(d);
  }
  return out;
}

/** A line of summary or detail with its quoted parts removed, if what remains passes the allow-list. */
function clean(text: string): string | undefined {
  const s = stripQuoted(text).trim();
  return valueFreeLine(s) ? s : undefined;
}

/**
 * Summaries of the diagnostics whose detail is the configuration author's `error_message` (variable
 * validations, resource and output pre/postconditions, `check` assertions; Terraform's
 * internal/terraform/eval_conditions.go and eval_variable.go, OpenTofu alike). That text can interpolate
 * any value (a default, a `file()`), unquoted, so the line allow-list cannot see it.
 */
const CUSTOM_CONDITION =
  /^(?:Invalid value for variable|Check block assertion failed|[A-Za-z ]{0,40}(?:precondition|postcondition|assertion) failed)$/;

/** Whether a diagnostic's detail is author-written text (`CUSTOM_CONDITION`). */
export function isCustomCondition(summary: string): boolean {
  return CUSTOM_CONDITION.test(summary.trim());
}

/** Stands for the author-written detail of a custom condition, which is not kept by default. */
export const CUSTOM_MESSAGE_DROPPED =
  '(the author-written message is not shown: it can hold any value; redaction.keepCustomMessages keeps it)';

/** How diagnostics are rendered. */
export interface DiagnosticOptions {
  /** Keep the author-written detail of custom conditions (config `redaction.keepCustomMessages`). */
  keepCustomMessages?: boolean;
}

/**
 * A diagnostic rendered as Terraform prints it, allow-listed: `Error: <summary>`, `  on <file> line
 * <n>`, then the detail lines that carry no value and a `Lock Info:` block's field lines. A custom condition's detail is the author's text:
 * it is replaced by `CUSTOM_MESSAGE_DROPPED` unless `keepCustomMessages`.
 */
export function diagnosticLines(d: Diagnostic, opts: DiagnosticOptions = {}): string[] {
  const head = d.severity === 'error' ? 'Error' : 'Warning';
  const lines = [`${head}: ${clean(d.summary) ?? '(summary not shown: it may hold a value)'}`];
  if (d.filename) lines.push(`  on ${d.filename}${d.line !== undefined ? ` line ${d.line}` : ''}`);
  if (isCustomCondition(d.summary) && !opts.keepCustomMessages) {
    lines.push(`  ${CUSTOM_MESSAGE_DROPPED}`);
    return lines;
  }
  const lockLine = lockBlockReader();
  for (const l of d.detail.split('\n')) {
    // A state-lock error's Lock Info block: its own, stricter allow-list (`lockInfo.ts`).
    if (lockLine(l.trim())) {
      lines.push(`    ${l.trim()}`);
      continue;
    }
    const c = clean(l);
    if (c) lines.push(`  ${c}`);
  }
  return lines;
}
