import { lastJsonLine, runTs } from './child.js';

const min = 60_000;
/** The reads one store's run times (hub/bench/refReads.ts `--pages-only`). */
const READS = ['gate', 'refMatrixFirstPage', 'refMatrixMidPage', 'refMatrixSitePage', 'refMatrixNoDataPage'];

/**
 * The refReads part (issue 60, docs/decisions/650-ref-matrix-pages.md): a store filled straight with
 * 1,000 sites × 200 default cells of `main` (--quick 200 × 200; --sites/--cells), on SQLite and on
 * PostgreSQL, each in a process of its own; the ref's gate and pages of the ref's matrix timed, and every
 * page read once as `hub refs report` reads them. Goal: each page read p95 ≤ 300 ms at 1,000 × 200.
 */
export function refReadsPart(quick: boolean) {
  const perRead = Object.fromEntries(READS.map((r) => [r, 0]));
  const store = {
    sites: 0,
    cells: 0,
    refMatrixCells: 0,
    refMatrixPages: 0,
    refMatrixEveryPageMs: 0,
    p50Ms: perRead,
    p95Ms: perRead,
    goalMs: 0,
    pass: { pagesWithinGoal: false },
  };
  return {
    keys: { sqlite: store, postgres: store },
    run: async () => {
      const size = process.argv.flatMap((a, i) =>
        /^--(sites|cells)(=|$)/.test(a) ? (a.includes('=') ? [a] : [a, process.argv[i + 1] ?? '']) : [],
      );
      const args = [
        '--pages-only',
        ...(quick ? ['--sites', '200', '--cells', '200', '--reads', '5'] : ['--reads', '12']),
        ...size,
      ];
      const out: Record<string, unknown> = {};
      for (const name of ['sqlite', 'postgres']) {
        const r = await runTs('hub/bench/refReads.ts', [...args, '--store', name], (quick ? 5 : 20) * min);
        out[name] = lastJsonLine(r.stdout);
      }
      return out;
    },
  };
}
