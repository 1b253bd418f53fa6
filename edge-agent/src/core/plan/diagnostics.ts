import { stripQuoted, valueFreeLine } from './excerptLines.js';

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
 * A diagnostic rendered as Terraform prints it, allow-listed: `Error: <summary>`, `  on <file> line
 * <n>`, then the detail lines that carry no value.
 */
export function diagnosticLines(d: Diagnostic): string[] {
  const head = d.severity === 'error' ? 'Error' : 'Warning';
  const lines = [`${head}: ${clean(d.summary) ?? '(summary not shown: it may hold a value)'}`];
  if (d.filename) lines.push(`  on ${d.filename}${d.line !== undefined ? ` line ${d.line}` : ''}`);
  for (const l of d.detail.split('\n')) {
    const c = clean(l);
    if (c) lines.push(`  ${c}`);
  }
  return lines;
}
