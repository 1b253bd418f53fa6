import type { MatrixCell } from '@driftline/protocol';
import type { ReadStore } from '../ports/HubStore.js';
/**
 * The first error diagnostic's summary in a failed plan's error excerpt (`Error: Unsupported argument`), so a
 * failure tile says more than `exit-1`. Terraform frames each diagnostic in box-drawing characters
 * (`╷ │ ╵`); those are dropped. Without an `Error:` line, the first `Warning:` line, else the first non-empty
 * line. Linear in the excerpt (capped at 2,000 characters by the summary's schema); at most 200 characters.
 */
export function firstDiagnostic(excerpt: string | undefined | null): string | null {
  if (!excerpt) return null;
  let warning: string | null = null;
  let first: string | null = null;
  for (const raw of excerpt.slice(0, 4000).split('\n')) {
    const line = raw.replace(/^[\s│╷╵|]+/, '').trimEnd();
    if (!line) continue;
    if (line.startsWith('Error: ')) return line.slice(0, 200);
    if (line.startsWith('Warning: ')) warning ??= line.slice(0, 200);
    first ??= line.slice(0, 200);
  }
  return warning ?? first;
}

/** Failed cells given their run's diagnostic per answer at most (the rest keep their reason). */
export const DIAGNOSTICS_CAP = 500;

/**
 * Failed cells with their run's first diagnostic summary, so a failure tile says more than `exit-1`: one
 * run read per failed cell, at most {@link DIAGNOSTICS_CAP} per answer.
 */
export async function withDiagnostics(
  store: Pick<ReadStore, 'getRun'>,
  cells: readonly MatrixCell[],
): Promise<MatrixCell[]> {
  let left = DIAGNOSTICS_CAP;
  const out: MatrixCell[] = [];
  for (const c of cells) {
    if (c.status !== 'failed' || !c.runId || left <= 0) {
      out.push(c);
      continue;
    }
    left--;
    const d = firstDiagnostic((await store.getRun(c.runId))?.summary.errorExcerpt);
    out.push(d ? { ...c, diagnostic: d } : c);
  }
  return out;
}
