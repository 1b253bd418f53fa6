import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CliGitMirror } from '../src/adapters/git/CliGitMirror.js';

const dirs: string[] = [];
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), 'dl-gitmirror-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.email=hq@example.org', '-c', 'user.name=hq', ...args], {
    cwd,
    encoding: 'utf8',
  }).trim();

function sourceRepo(): string {
  const d = tmp();
  git(d, 'init', '-q', '-b', 'main');
  writeFileSync(join(d, 'main.tf'), '# one\n');
  git(d, 'add', '.');
  git(d, 'commit', '-q', '-m', 'one');
  return d;
}

describe('CliGitMirror (real git)', () => {
  it('takes a full bundle, then an incremental one, and reports heads', async () => {
    const src = sourceRepo();
    const out = tmp();
    git(src, 'bundle', 'create', join(out, 'full.bundle'), 'main');
    const m = new CliGitMirror(join(out, 'mirrors'));
    const first = await m.apply('infra', join(out, 'full.bundle'));
    const one = git(src, 'rev-parse', 'HEAD');
    expect(first).toEqual({ ok: true, updated: { main: one } });
    git(src, 'checkout', '-q', '-b', 'pr/1');
    writeFileSync(join(src, 'main.tf'), '# two\n');
    git(src, 'commit', '-qam', 'two');
    const two = git(src, 'rev-parse', 'HEAD');
    git(src, 'bundle', 'create', join(out, 'inc.bundle'), 'main', 'pr/1', `^${one}`);
    expect(await m.apply('infra', join(out, 'inc.bundle'))).toEqual({ ok: true, updated: { 'pr/1': two } });
    expect(await m.heads('infra')).toEqual({ main: one, 'pr/1': two });
    expect(await m.resolve('infra', 'pr/1')).toBe(two);
    expect(await m.resolve('infra', 'x', one)).toBe(one);
    expect(await m.resolve('infra', 'x', 'f'.repeat(40))).toBeNull();
    expect(await m.resolve('infra', 'pr/2')).toBeNull();
  });

  it('refuses an incremental bundle whose prerequisites the site lacks, naming them', async () => {
    const src = sourceRepo();
    const one = git(src, 'rev-parse', 'HEAD');
    writeFileSync(join(src, 'main.tf'), '# two\n');
    git(src, 'commit', '-qam', 'two');
    const out = tmp();
    git(src, 'bundle', 'create', join(out, 'inc.bundle'), 'main', `^${one}`);
    const m = new CliGitMirror(join(out, 'mirrors'));
    const r = await m.apply('infra', join(out, 'inc.bundle'));
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.reason).toMatch(/^prerequisites missing/);
      expect(r.reason).toContain(one.slice(0, 12));
      expect(r.reason).toContain('full bundle');
    }
    expect(await m.heads('infra')).toEqual({});
  });

  it('refuses a file that is not a git bundle, and branches with unsafe names', async () => {
    const out = tmp();
    writeFileSync(join(out, 'junk'), 'PK\u0003\u0004 not a bundle');
    const m = new CliGitMirror(join(out, 'mirrors'));
    expect(await m.apply('infra', join(out, 'junk'))).toEqual({
      ok: false,
      reason: 'not a git bundle (git bundle verify refused it)',
    });
    const src = sourceRepo();
    git(src, 'branch', 'pr/$(id)');
    git(src, 'bundle', 'create', join(out, 'evil.bundle'), '--all');
    const r = await m.apply('infra', join(out, 'evil.bundle'));
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toContain('is refused');
    expect(await m.heads('infra')).toEqual({});
    git(src, 'branch', '-D', 'pr/$(id)');
    git(src, 'tag', 'v1');
    git(src, 'bundle', 'create', join(out, 'tag.bundle'), 'main', 'v1');
    const t = await m.apply('infra', join(out, 'tag.bundle'));
    expect(t.ok).toBe(false);
    if (!t.ok) expect(t.reason).toContain('only branches');
  });

  it('checks out a commit without running hooks and without following symlinks', async () => {
    const src = sourceRepo();
    symlinkSync('/etc/passwd', join(src, 'link.tf'));
    git(src, 'add', '.');
    git(src, 'commit', '-qm', 'link');
    const head = git(src, 'rev-parse', 'HEAD');
    const out = tmp();
    git(src, 'bundle', 'create', join(out, 'full.bundle'), 'main');
    const m = new CliGitMirror(join(out, 'mirrors'));
    expect((await m.apply('infra', join(out, 'full.bundle'))).ok).toBe(true);
    const hook = join(out, 'mirrors', 'infra.git', 'hooks', 'post-checkout');
    writeFileSync(hook, `#!/bin/sh\ntouch ${join(out, 'hook-ran')}\n`);
    chmodSync(hook, 0o755);
    const wt = join(out, 'wt');
    await m.checkout('infra', head, wt);
    expect(readFileSync(join(wt, 'main.tf'), 'utf8')).toBe('# one\n');
    expect(lstatSync(join(wt, 'link.tf')).isSymbolicLink()).toBe(false);
    expect(readFileSync(join(wt, 'link.tf'), 'utf8')).toBe('/etc/passwd');
    expect(existsSync(join(out, 'hook-ran'))).toBe(false);
    await m.release('infra', wt);
    expect(existsSync(wt)).toBe(false);
  });
});
