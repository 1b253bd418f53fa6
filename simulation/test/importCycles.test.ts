/**
 * No import circles (issue 57, docs/decisions/630-no-import-cycles.md): among every workspace's `src/`,
 * `import type` and `export … from` counted like any import, `@driftline/*` followed to the workspace
 * file its package's `exports` names. The suite fails on the first circle, naming its files in order.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cruise } from 'dependency-cruiser';
import { describe, expect, it } from 'vitest';

// the checkout's root (not programs.ts' ROOT, which reaches child_process and so the process lane only)
const ROOT = join(import.meta.dirname, '../..');

type Graph = {
  /** The first circle found, as the files from its first back to it; [] when there is none. */
  firstCircle: string[];
  /** Imports of a relative path or of a workspace that resolved to no file. */
  unresolved: string[];
  /** How many imports of a `@driftline/*` package were followed into its workspace's files. */
  workspaceEdges: number;
};

/** Every module under `dirs` (relative to `baseDir`) and what it imports, type-only imports included. */
async function importGraph(baseDir: string, dirs: string[]): Promise<Graph> {
  const { output } = await cruise(dirs, {
    baseDir,
    // `import type` and `export type … from` are dependencies too, though the compiler erases them
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
    // `@driftline/hop/client` → hop/src/client.ts, by hop's package.json `exports`
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import'] },
    validate: true,
    ruleSet: { forbidden: [{ name: 'no-circular', severity: 'error', from: {}, to: { circular: true } }] },
  });
  if (typeof output === 'string')
    throw new Error(`dependency-cruiser answered text: ${output.slice(0, 200)}`);
  const first = output.summary.violations.find((v) => v.rule.name === 'no-circular');
  const deps = output.modules.flatMap((m) => m.dependencies.map((d) => ({ from: m.source, ...d })));
  return {
    firstCircle: first ? [first.from, ...(first.cycle ?? []).map((c) => c.name)] : [],
    unresolved: deps
      .filter((d) => d.couldNotResolve && (d.module.startsWith('.') || d.module.startsWith('@driftline/')))
      .map((d) => `${d.from} -> ${d.module}`),
    workspaceEdges: deps.filter(
      (d) => d.module.startsWith('@driftline/') && !d.resolved.includes('node_modules'),
    ).length,
  };
}

describe('import circles', () => {
  it('there are none in any workspace, type-only imports included', async () => {
    const workspaces: string[] = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).workspaces;
    expect(workspaces.length).toBeGreaterThanOrEqual(7);
    const graph = await importGraph(
      ROOT,
      workspaces.map((w) => `${w}/src`),
    );
    // the graph is whole: every `.js` import found its `.ts`, every workspace import its file
    expect(graph.unresolved).toEqual([]);
    expect(graph.workspaceEdges).toBeGreaterThan(100);
    // Break one by moving what both files need to a module of its own, or by turning the dependency
    // around through a port (docs/decisions/600-no-import-circles.md).
    expect(graph.firstCircle, `an import circle: ${graph.firstCircle.join(' -> ')}`).toEqual([]);
  });

  it('finds a circle made of a type-only import, a re-export and an import, and names it in order', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'import-circle-'));
    try {
      writeFileSync(
        join(dir, 'a.ts'),
        "import type { B } from './b.js';\nexport const a = 1;\nexport type A = B;\n",
      );
      writeFileSync(join(dir, 'b.ts'), "export { c } from './c.js';\nexport type B = number;\n");
      writeFileSync(join(dir, 'c.ts'), "import { a } from './a.js';\nexport const c = a;\n");
      writeFileSync(join(dir, 'd.ts'), "import { c } from './b.js';\nexport const d = c;\n");
      const graph = await importGraph(dir, ['.']);
      expect(graph.unresolved).toEqual([]);
      expect(graph.firstCircle).toEqual(['a.ts', 'b.ts', 'c.ts', 'a.ts']);

      writeFileSync(join(dir, 'c.ts'), 'export const c = 1;\n');
      expect((await importGraph(dir, ['.'])).firstCircle).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
