/**
 * Terraform's machine-readable UI (`plan -json`): one JSON object per line on stdout, starting with a
 * `version` message; errors are `diagnostic` messages (internal/command/views/json/diagnostic.go).
 */

export interface Pos {
  line: number;
  column: number;
  byte: number;
}

export interface DiagnosticJson {
  severity: 'error' | 'warning';
  summary: string;
  detail: string;
  range?: { filename: string; start: Pos; end: Pos };
  snippet?: {
    context: string | null;
    code: string;
    start_line: number;
    highlight_start_offset: number;
    highlight_end_offset: number;
    values: { traversal: string; statement: string }[];
  };
}

const line = (o: object) => `${JSON.stringify(o)}\n`;

export function versionMessage(version: string, timestamp: string): string {
  return line({
    '@level': 'info',
    '@message': `Terraform ${version}`,
    '@module': 'terraform.ui',
    '@timestamp': timestamp,
    terraform: version,
    type: 'version',
    ui: '1.2',
  });
}

export function diagnosticMessage(d: DiagnosticJson, timestamp: string): string {
  return line({
    '@level': d.severity,
    '@message': `${d.severity === 'error' ? 'Error' : 'Warning'}: ${d.summary}`,
    '@module': 'terraform.ui',
    '@timestamp': timestamp,
    diagnostic: d,
    type: 'diagnostic',
  });
}

export function changeSummaryMessage(
  c: { add: number; change: number; remove: number },
  timestamp: string,
): string {
  return line({
    '@level': 'info',
    '@message': `Plan: ${c.add} to add, ${c.change} to change, ${c.remove} to destroy.`,
    '@module': 'terraform.ui',
    '@timestamp': timestamp,
    changes: { ...c, import: 0, operation: 'plan' },
    type: 'change_summary',
  });
}

/** A plain-text diagnostic box (stderr) turned into a diagnostic message: summary, then detail. */
export function boxToDiagnostic(box: string): DiagnosticJson {
  const lines = box
    .split('\n')
    .filter((l) => l.startsWith('│'))
    .map((l) => l.replace(/^│ ?/, ''));
  const summary = (lines[0] ?? '').replace(/^Error: /, '');
  return { severity: 'error', summary, detail: lines.slice(2).join('\n').trim() };
}
