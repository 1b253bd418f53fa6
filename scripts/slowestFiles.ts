/**
 * A vitest reporter that ends every run with its 20 slowest test files (wall time of each file: import,
 * set-up and tests) and writes every file's figures to `.tmp/test-timing.json`, so the suite's time stays
 * visible (issue 40; docs/decisions/440-compiled-programs.md). On in the root config beside the default
 * reporter; `npm run test:timing` prints the last run's list again.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';

export interface FileTiming {
  file: string;
  ms: number;
  tests: number;
  state: string;
}

export function timings(modules: ReadonlyArray<TestModule>, root: string): FileTiming[] {
  return modules
    .map((m) => {
      const d = m.diagnostic();
      return {
        file: relative(root, m.moduleId),
        ms: Math.round(
          d.environmentSetupDuration + d.prepareDuration + d.collectDuration + d.setupDuration + d.duration,
        ),
        tests: [...m.children.allTests()].length,
        state: m.state(),
      };
    })
    .sort((a, b) => b.ms - a.ms);
}

export function formatSlowest(rows: FileTiming[], n = 20): string {
  const lines = rows
    .slice(0, n)
    .map(
      (r) => `  ${(r.ms / 1000).toFixed(1).padStart(7)} s  ${String(r.tests).padStart(3)} tests  ${r.file}`,
    );
  const total = rows.reduce((s, r) => s + r.ms, 0);
  return `\n${Math.min(n, rows.length)} slowest test files (of ${rows.length}, ${(total / 1000).toFixed(0)} s in all):\n${lines.join('\n')}\n`;
}

export default class SlowestFiles implements Reporter {
  private root = process.cwd();

  onInit(ctx: { config: { root: string } }): void {
    this.root = ctx.config.root;
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    if (modules.length < 2) return;
    const rows = timings(modules, this.root);
    const dir = join(this.root, '.tmp');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'test-timing.json'), `${JSON.stringify(rows, null, 1)}\n`);
    process.stdout.write(formatSlowest(rows));
  }
}
