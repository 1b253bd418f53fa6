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

/** Run reads in flight at once for {@link withDiagnostics}: on PostgreSQL each is a round trip. */
const DIAGNOSTIC_READS_AT_ONCE = 16;

/**
 * Failed cells with their run's first diagnostic summary, so a failure tile says more than `exit-1`: one
 * run read per failed cell, at most {@link DIAGNOSTICS_CAP} per answer, {@link DIAGNOSTIC_READS_AT_ONCE}
 * at a time, in the cells' order.
 */
export async function withDiagnostics(
  store: Pick<ReadStore, 'getRun'>,
  cells: readonly MatrixCell[],
): Promise<MatrixCell[]> {
  const out = [...cells];
  const failed: number[] = [];
  for (const [i, c] of cells.entries())
    if (c.status === 'failed' && c.runId && failed.length < DIAGNOSTICS_CAP) failed.push(i);
  for (let at = 0; at < failed.length; at += DIAGNOSTIC_READS_AT_ONCE) {
    const some = failed.slice(at, at + DIAGNOSTIC_READS_AT_ONCE);
    const runs = await Promise.all(some.map((i) => store.getRun((cells[i] as MatrixCell).runId as string)));
    for (const [k, i] of some.entries()) {
      const d = firstDiagnostic(runs[k]?.summary.errorExcerpt);
      if (d) out[i] = { ...(cells[i] as MatrixCell), diagnostic: d };
    }
  }
  return out;
}
