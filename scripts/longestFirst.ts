/**
 * A vitest sequencer that starts the longest test files first, whichever workspace they are in (issue 40;
 * docs/decisions/441-longest-files-first.md). Vitest's own order runs the workspaces one after another and,
 * on a clean clone with no cache, the largest files first: the simulation's files that wait minutes on
 * compressed link time started last, and the run waited for them alone at its end.
 *
 * How long a file takes comes from this machine's last run where vitest has it (its results cache), else
 * from `scripts/test-weights.json` (seconds per file, written by `npm run test:timing -- --write-weights`
 * from a whole run), else from the file's size, as vitest does.
 */
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** Seconds per test file, keyed by its path from the repository's root. */
export type Weights = Record<string, number>;

export function loadWeights(file: string): Weights {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Weights;
  } catch {
    return {};
  }
}

/**
 * The order: files that failed last time first (as vitest does), then by expected seconds, longest first;
 * files known nowhere after those known, larger first.
 */
export function longestFirst<T>(
  files: ReadonlyArray<T>,
  info: (f: T) => { failed: boolean; seconds: number | undefined; size: number },
): T[] {
  const known = files.map((f) => ({ f, ...info(f) }));
  return known
    .sort((a, b) => {
      if (a.failed !== b.failed) return a.failed ? -1 : 1;
      if (a.seconds !== undefined && b.seconds !== undefined) return b.seconds - a.seconds;
      if (a.seconds !== undefined) return -1;
      if (b.seconds !== undefined) return 1;
      return b.size - a.size;
    })
    .map((k) => k.f);
}

export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const weights = loadWeights(join(root, 'scripts', 'test-weights.json'));
    const cache = this.ctx.cache;
    return longestFirst(files, (f) => {
      const path = relative(root, f.moduleId);
      const key = `${f.project.name}:${path}`;
      const last = cache.getFileTestResults(key);
      const seen = last?.duration !== undefined ? last.duration / 1000 : undefined;
      const weight = weights[path];
      return {
        failed: last?.failed === true,
        seconds: seen !== undefined && weight !== undefined ? Math.max(seen, weight) : (seen ?? weight),
        size: cache.getFileStats(key)?.size ?? 0,
      };
    });
  }
}
