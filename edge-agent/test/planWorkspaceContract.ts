import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { GitProbe, ScratchSpace } from '../src/ports/PlanWorkspace.js';
import { tempDir } from './helpers/storeFixtures.js';

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.email=ops@example.org', '-c', 'user.name=ops', ...args], {
    cwd,
    encoding: 'utf8',
  }).trim();

/**
 * What every `GitProbe` promises (ports/PlanWorkspace.ts), on working directories made by the real
 * `git`: commit, branch (none when detached) and dirtiness of tracked files; undefined outside a
 * repository. Only `CliGitProbe` runs it: a probe without git would be a second git.
 */
export function runGitProbeContract(name: string, setup: () => GitProbe): void {
  describe(`GitProbe contract: ${name}`, () => {
    const dirs: string[] = [];
    afterEach(() => {
      for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
    });
    const repo = () => {
      const d = tempDir('driftline-probe-');
      dirs.push(d);
      git(d, 'init', '-q', '-b', 'main');
      mkdirSync(join(d, 'stacks', 'net'), { recursive: true });
      writeFileSync(join(d, 'stacks', 'net', 'main.tf'), '# one\n');
      git(d, 'add', '.');
      git(d, 'commit', '-q', '-m', 'one');
      return { d, head: git(d, 'rev-parse', 'HEAD') };
    };

    it('describes a clean checkout on a branch, from any directory inside it', async () => {
      const { d, head } = repo();
      expect(await setup().describe(join(d, 'stacks', 'net'))).toEqual({
        commit: head,
        branch: 'main',
        dirty: false,
      });
    });

    it('says dirty for a changed tracked file, not for an untracked one', async () => {
      const { d } = repo();
      writeFileSync(join(d, 'notes.txt'), 'untracked');
      expect((await setup().describe(d))?.dirty).toBe(false);
      writeFileSync(join(d, 'stacks', 'net', 'main.tf'), '# changed\n');
      expect((await setup().describe(d))?.dirty).toBe(true);
    });

    it('names no branch for a detached head', async () => {
      const { d, head } = repo();
      git(d, 'checkout', '-q', '--detach');
      expect(await setup().describe(d)).toEqual({ commit: head, dirty: false });
    });

    it('answers undefined outside a repository, and for a repository without a commit', async () => {
      const plain = tempDir('driftline-probe-');
      dirs.push(plain);
      expect(await setup().describe(plain)).toBeUndefined();
      git(plain, 'init', '-q');
      expect(await setup().describe(plain)).toBeUndefined();
      expect(await setup().describe(join(plain, 'missing'))).toBeUndefined();
    });
  });
}

/**
 * What every `ScratchSpace` promises (ports/PlanWorkspace.ts): a new private directory (0700) per
 * run, never shared, removed with all it holds on dispose. A real directory, since terraform writes
 * the plan into it: there is no memory adapter.
 */
export function runScratchSpaceContract(name: string, setup: (base: string) => ScratchSpace): void {
  describe(`ScratchSpace contract: ${name}`, () => {
    it('makes a new private directory per run and removes it with its contents on dispose', async () => {
      const base = tempDir('driftline-scratch-base-');
      const scratch = setup(base);
      const [a, b] = [await scratch.create(), await scratch.create()];
      expect(a.path).not.toBe(b.path);
      expect(statSync(a.path).isDirectory()).toBe(true);
      expect(statSync(a.path).mode & 0o777).toBe(0o700);
      mkdirSync(join(a.path, '.terraform'));
      writeFileSync(join(a.path, '.terraform', 'plan.tfplan'), 'every value in clear');
      await a.dispose();
      await a.dispose();
      expect(existsSync(a.path)).toBe(false);
      expect(existsSync(b.path)).toBe(true);
      await b.dispose();
      rmSync(base, { recursive: true, force: true });
    });
  });
}
