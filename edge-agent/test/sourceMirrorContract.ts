import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { SourceMirror } from '../src/ports/SourceMirror.js';
import { tempDir } from './helpers/storeFixtures.js';

/** Headquarters' side, with the real `git`: a repository and the bundles it publishes. */
class Source {
  readonly dir = tempDir('driftline-hq-');
  private n = 0;

  constructor(private readonly out: string) {
    this.git('init', '-q', '-b', 'main');
    this.commit('main.tf', '# one\n');
  }

  git(...args: string[]): string {
    return execFileSync('git', ['-c', 'user.email=hq@example.org', '-c', 'user.name=hq', ...args], {
      cwd: this.dir,
      encoding: 'utf8',
    }).trim();
  }

  commit(file: string, text: string): string {
    writeFileSync(join(this.dir, file), text);
    this.git('add', '.');
    this.git('commit', '-q', '-m', text);
    return this.git('rev-parse', 'HEAD');
  }

  /** `git bundle create` of `refs` (with `^commit` exclusions for an incremental one); its path. */
  bundle(...refs: string[]): string {
    const path = join(this.out, `b${this.n++}.bundle`);
    this.git('bundle', 'create', '-q', path, ...refs);
    return path;
  }
}

/**
 * What every `SourceMirror` promises (ports/SourceMirror.ts), with bundles made by the real `git`:
 * branches from a bundle are fetched in and reported when they moved, a bundle that is not one, lacks
 * its prerequisites or carries anything but safely named branches changes nothing, refs and commits
 * resolve or answer null, a commit checks out into a worktree that `release` removes. Only
 * `CliGitMirror` runs it: a mirror without git would be a second git (docs/decisions/120-agent-ledger.md).
 */
export function runSourceMirrorContract(name: string, setup: (dir: string) => SourceMirror): void {
  describe(`SourceMirror contract: ${name}`, () => {
    const dirs: string[] = [];
    afterEach(() => {
      for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
    });
    const open = () => {
      const out = tempDir('driftline-site-');
      const src = new Source(out);
      dirs.push(out, src.dir);
      return { out, src, mirror: setup(join(out, 'mirrors')) };
    };

    it('knows no heads and resolves nothing before a bundle arrives', async () => {
      const { mirror } = open();
      expect(await mirror.heads('infra')).toEqual({});
      expect(await mirror.resolve('infra', 'main')).toBeNull();
    });

    it('takes a full bundle, then an incremental one, reporting only the branches that moved', async () => {
      const { src, mirror } = open();
      const one = src.git('rev-parse', 'HEAD');
      const full = src.bundle('main');
      expect(await mirror.apply('infra', full)).toEqual({ ok: true, updated: { main: one } });
      expect(await mirror.apply('infra', full)).toEqual({ ok: true, updated: {} });
      src.git('checkout', '-q', '-b', 'pr/1');
      const two = src.commit('main.tf', '# two\n');
      expect(await mirror.apply('infra', src.bundle('main', 'pr/1', `^${one}`))).toEqual({
        ok: true,
        updated: { 'pr/1': two },
      });
      expect(await mirror.heads('infra')).toEqual({ main: one, 'pr/1': two });
      expect(await mirror.heads('other')).toEqual({});
    });

    it('moves a branch that was rewritten at headquarters (a force push)', async () => {
      const { src, mirror } = open();
      const one = src.git('rev-parse', 'HEAD');
      src.commit('main.tf', '# two\n');
      expect((await mirror.apply('infra', src.bundle('main'))).ok).toBe(true);
      src.git('reset', '-q', '--hard', one);
      const rewritten = src.commit('main.tf', '# two, rewritten\n');
      expect(await mirror.apply('infra', src.bundle('main'))).toEqual({
        ok: true,
        updated: { main: rewritten },
      });
    });

    it('changes nothing for a file that is not a bundle, or one whose prerequisites it lacks', async () => {
      const { out, src, mirror } = open();
      const one = src.git('rev-parse', 'HEAD');
      src.commit('main.tf', '# two\n');
      const junk = join(out, 'junk');
      writeFileSync(junk, 'PK\u0003\u0004 not a bundle');
      for (const path of [junk, src.bundle('main', `^${one}`)]) {
        const r = await mirror.apply('infra', path);
        expect(r).toMatchObject({ ok: false, reason: expect.stringMatching(/\S/) });
      }
      expect(await mirror.heads('infra')).toEqual({});
    });

    it('takes branches only, each safely named: tags and unsafe names refuse the whole bundle', async () => {
      const { src, mirror } = open();
      src.git('tag', 'v1');
      src.git('branch', 'pr/$(id)');
      for (const refs of [['main', 'v1'], ['--all']]) {
        const r = await mirror.apply('infra', src.bundle(...refs));
        expect(r).toMatchObject({ ok: false, reason: expect.stringMatching(/\S/) });
      }
      expect(await mirror.heads('infra')).toEqual({});
    });

    it('resolves a ref to its head, a held commit to itself, anything else to null', async () => {
      const { src, mirror } = open();
      const one = src.git('rev-parse', 'HEAD');
      const two = src.commit('main.tf', '# two\n');
      expect((await mirror.apply('infra', src.bundle('main'))).ok).toBe(true);
      expect(await mirror.resolve('infra', 'main')).toBe(two);
      expect(await mirror.resolve('infra', 'main', one)).toBe(one);
      expect(await mirror.resolve('infra', 'main', 'f'.repeat(40))).toBeNull();
      expect(await mirror.resolve('infra', 'main', one.slice(0, 12))).toBeNull();
      expect(await mirror.resolve('infra', 'pr/2')).toBeNull();
      expect(await mirror.resolve('infra', '../main')).toBeNull();
    });

    it('checks commits out into new directories side by side, and releases them (gone or not)', async () => {
      const { out, src, mirror } = open();
      const one = src.git('rev-parse', 'HEAD');
      const two = src.commit('main.tf', '# two\n');
      expect((await mirror.apply('infra', src.bundle('main'))).ok).toBe(true);
      const [a, b] = [join(out, 'wt-a'), join(out, 'wt-b')];
      await mirror.checkout('infra', one, a);
      await mirror.checkout('infra', two, b);
      expect(readFileSync(join(a, 'main.tf'), 'utf8')).toBe('# one\n');
      expect(readFileSync(join(b, 'main.tf'), 'utf8')).toBe('# two\n');
      await mirror.release('infra', a);
      expect(existsSync(a)).toBe(false);
      rmSync(b, { recursive: true, force: true });
      await mirror.release('infra', b);
      await mirror.checkout('infra', two, b);
      expect(readFileSync(join(b, 'main.tf'), 'utf8')).toBe('# two\n');
      await expect(mirror.checkout('infra', 'f'.repeat(40), join(out, 'wt-c'))).rejects.toThrow();
    });

    it('refuses a repository name that is not a plain name', async () => {
      const { src, mirror } = open();
      await expect(mirror.apply('../escape', src.bundle('main'))).rejects.toThrow(/repository name/);
      await expect(mirror.heads('a/b')).rejects.toThrow(/repository name/);
    });
  });
}
