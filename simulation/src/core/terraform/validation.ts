import type { DiagnosticJson } from './uiJson.js';

/** A variable definitions file the fake was given with `-var-file`, as read from disk. */
export interface VarFile {
  path: string;
  text: string;
}

/** The assignment a validation rule rejects: where it is and what it says. */
export interface Offender {
  variable: string;
  /** The value as written (a string literal's content, or a number). */
  value: string;
  quoted: boolean;
  filename: string;
  line: number;
  code: string;
  column: number;
}

const ASSIGNMENT = /^(\s*)([A-Za-z_][A-Za-z0-9_-]*)(\s*=\s*)("(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?)\s*$/;

/**
 * The first `name = "literal"` or `name = 123` line of the var files, else the site's database
 * password as set by a default in variables.tf (the fake then reports it there).
 */
export function findOffender(varFiles: readonly VarFile[], fallback: string): Offender {
  for (const f of varFiles) {
    const lines = f.text.split('\n');
    for (let i = 0; i < lines.length; i++) {
      const m = ASSIGNMENT.exec(lines[i] as string);
      if (!m) continue;
      const literal = m[4] as string;
      const quoted = literal.startsWith('"');
      return {
        variable: m[2] as string,
        value: quoted ? (JSON.parse(literal) as string) : literal,
        quoted,
        filename: f.path,
        line: i + 1,
        code: (lines[i] as string).trim(),
        column: (m[1] as string).length + (m[2] as string).length + (m[3] as string).length + 1,
      };
    }
  }
  return {
    variable: 'db_password',
    value: fallback,
    quoted: true,
    filename: 'variables.tf',
    line: 14,
    code: `default = ${JSON.stringify(fallback)}`,
    column: 13,
  };
}

function message(o: Offender, variant: number): string {
  return variant === 1
    ? `The value ${o.value} for ${o.variable} is not allowed in this environment.`
    : `The ${o.variable.replaceAll('_', ' ')} must be at least 32 characters long.`;
}

const RULE_AT = 'This was checked by the validation rule at variables.tf:4,3-13.';

/**
 * Terraform's error for a value that fails a `validation` block, as printed on stderr: the source
 * line and the value (`var.x is "…"`) are quoted, whatever the variable holds.
 */
export function validationErrorText(o: Offender, variant: number): string {
  const literal = o.quoted ? JSON.stringify(o.value) : o.value;
  const pad = String(o.line).length;
  return [
    '',
    'Planning failed. Terraform encountered an error while generating this plan.',
    '',
    '╷',
    '│ Error: Invalid value for variable',
    '│ ',
    `│   on ${o.filename} line ${o.line}:`,
    `│   ${String(o.line).padStart(pad)}: ${o.code}`,
    `│   ${' '.repeat(pad)}├────────────────`,
    `│   ${' '.repeat(pad)}│ var.${o.variable} is ${literal}`,
    '│ ',
    `│ ${message(o, variant)}`,
    '│ ',
    `│ ${RULE_AT}`,
    '╵',
    '',
  ].join('\n');
}

/** The same error as `plan -json` reports it: a diagnostic whose snippet quotes the line and the value. */
export function validationDiagnostic(o: Offender, variant: number): DiagnosticJson {
  const literal = o.quoted ? JSON.stringify(o.value) : o.value;
  const start = o.code.length - literal.length;
  return {
    severity: 'error',
    summary: 'Invalid value for variable',
    detail: `${message(o, variant)}\n\n${RULE_AT}`,
    range: {
      filename: o.filename,
      start: { line: o.line, column: o.column, byte: o.column - 1 },
      end: { line: o.line, column: o.column + literal.length, byte: o.column - 1 + literal.length },
    },
    snippet: {
      context: null,
      code: o.code,
      start_line: o.line,
      highlight_start_offset: start,
      highlight_end_offset: o.code.length,
      values: [{ traversal: `var.${o.variable}`, statement: `is ${literal}` }],
    },
  };
}
