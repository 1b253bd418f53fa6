import { execFile } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { refNameProblem } from '@driftline/protocol';
import type { ApplyResult, SourceMirror } from '../../ports/SourceMirror.js';

/** Options every call carries: no hooks, no symlinks checked out, no transport but files, no user config. */
const SAFE = [
  '-c',
  'core.hooksPath=/dev/null',
  '-c',
  'core.symlinks=false',
  '-c',
  'protocol.allow=never',
  '-c',
  'protocol.file.allow=always',
  '-c',
  'core.fsmonitor=false',
  '-c',
  'advice.detachedHead=false',
];

const ENV = {
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_TERMINAL_PROMPT: '0',
  GIT_ALLOW_PROTOCOL: 'file',
  LC_ALL: 'C',
};

interface GitResult {
  ok: boolean;
  stdout: string;
  stderr: string;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;
const COMMIT = /^[0-9a-f]{40}([0-9a-f]{24})?$/;

/**
 * Bare mirrors under `<dir>/<repo>.git`, run with the system `git` (Debian package `git`): bundles are
 * checked with `git bundle verify` (prerequisites present) and `git bundle list-heads` (branches only,
 * each a sane ref name) before `git fetch` takes them into `refs/remotes/hq/*`. Plans check a commit out
 * as a detached worktree in scratch space.
 */
export class CliGitMirror implements SourceMirror {
  constructor(
    private readonly dir: string,
    private readonly opts: { timeoutMs?: number; env?: NodeJS.ProcessEnv } = {},
  ) {}

  private git(args: string[], cwd?: string): Promise<GitResult> {
    return new Promise((resolve) => {
      execFile(
        'git',
        [...SAFE, ...args],
        {
          cwd,
          timeout: this.opts.timeoutMs ?? 600_000,
          maxBuffer: 16 * 1024 * 1024,
          env: { PATH: (this.opts.env ?? process.env).PATH ?? '/usr/bin:/bin', HOME: '/nonexistent', ...ENV },
        },
        (err, stdout, stderr) => resolve({ ok: !err, stdout: String(stdout), stderr: String(stderr) }),
      );
    });
  }

  private repoDir(repo: string): string {
    if (!NAME.test(repo)) throw new Error(`not a repository name: ${repo}`);
    return join(this.dir, `${repo}.git`);
  }

  private async ensure(repo: string): Promise<string> {
    const dir = this.repoDir(repo);
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const r = await this.git(['init', '--quiet', '--bare', dir]);
    if (!r.ok) throw new Error(`git init --bare failed: ${firstLine(r.stderr)}`);
    return dir;
  }

  async apply(repo: string, bundlePath: string): Promise<ApplyResult> {
    const dir = await this.ensure(repo);
    const verify = await this.git(['-C', dir, 'bundle', 'verify', bundlePath]);
    if (!verify.ok) {
      if (/does not look like a v\d( or v\d)? bundle file|not a bundle/i.test(verify.stderr))
        return { ok: false, reason: 'not a git bundle (git bundle verify refused it)' };
      if (/lacks these prerequisite commits/.test(verify.stderr)) {
        const missing = [...verify.stderr.matchAll(/\b([0-9a-f]{40,64})\b/g)].map((m) => m[1]);
        return {
          ok: false,
          reason: `prerequisites missing: the bundle builds on ${missing.length} commit(s) this site lacks (${missing
            .slice(0, 3)
            .map((c) => c?.slice(0, 12))
            .join(', ')}); publish again and a full bundle is sent`,
        };
      }
      return { ok: false, reason: `git bundle verify failed: ${firstLine(verify.stderr)}` };
    }
    const list = await this.git(['-C', dir, 'bundle', 'list-heads', bundlePath]);
    if (!list.ok) return { ok: false, reason: `git bundle list-heads failed: ${firstLine(list.stderr)}` };
    const heads: Record<string, string> = {};
    for (const line of list.stdout.split('\n')) {
      if (!line.trim()) continue;
      const [sha, name] = line.trim().split(/\s+/, 2);
      if (name === 'HEAD') continue;
      const branch = name?.startsWith('refs/heads/') ? name.slice('refs/heads/'.length) : null;
      if (!sha || !COMMIT.test(sha) || branch === null)
        return {
          ok: false,
          reason: `the bundle carries "${(name ?? '').slice(0, 80)}": only branches (refs/heads/*) are taken`,
        };
      const problem = refNameProblem(branch);
      if (problem)
        return { ok: false, reason: `the bundle's branch "${branch.slice(0, 80)}" is refused: ${problem}` };
      heads[branch] = sha;
    }
    if (Object.keys(heads).length === 0) return { ok: false, reason: 'the bundle carries no branch' };
    const before = await this.heads(repo);
    const fetch = await this.git([
      '-C',
      dir,
      'fetch',
      '--quiet',
      '--no-tags',
      '--no-recurse-submodules',
      '--no-write-fetch-head',
      bundlePath,
      ...Object.keys(heads).map((b) => `+refs/heads/${b}:refs/remotes/hq/${b}`),
    ]);
    if (!fetch.ok)
      return { ok: false, reason: `git fetch from the bundle failed: ${firstLine(fetch.stderr)}` };
    const updated: Record<string, string> = {};
    for (const [ref, sha] of Object.entries(heads)) if (before[ref] !== sha) updated[ref] = sha;
    return { ok: true, updated };
  }

  async heads(repo: string): Promise<Record<string, string>> {
    const r = await this.git([
      '-C',
      this.repoDir(repo),
      'for-each-ref',
      '--format=%(objectname) %(refname)',
      'refs/remotes/hq/',
    ]);
    const out: Record<string, string> = {};
    if (!r.ok) return out;
    for (const line of r.stdout.split('\n')) {
      const [sha, name] = line.trim().split(' ', 2);
      if (sha && name?.startsWith('refs/remotes/hq/')) out[name.slice('refs/remotes/hq/'.length)] = sha;
    }
    return out;
  }

  async resolve(repo: string, ref: string, commit?: string): Promise<string | null> {
    if (commit !== undefined) {
      if (!COMMIT.test(commit)) return null;
      const r = await this.git(['-C', this.repoDir(repo), 'cat-file', '-e', `${commit}^{commit}`]);
      return r.ok ? commit : null;
    }
    if (refNameProblem(ref)) return null;
    return (await this.heads(repo))[ref] ?? null;
  }

  async checkout(repo: string, commit: string, dir: string): Promise<void> {
    if (!COMMIT.test(commit)) throw new Error('not a commit id');
    const r = await this.git([
      '-C',
      this.repoDir(repo),
      'worktree',
      'add',
      '--quiet',
      '--detach',
      dir,
      commit,
    ]);
    if (!r.ok) throw new Error(`git worktree add failed: ${firstLine(r.stderr)}`);
  }

  async release(repo: string, dir: string): Promise<void> {
    const repoDir = this.repoDir(repo);
    await this.git(['-C', repoDir, 'worktree', 'remove', '--force', dir]);
    await this.git(['-C', repoDir, 'worktree', 'prune']);
  }
}

function firstLine(text: string): string {
  return (text.split('\n').find((l) => l.trim()) ?? '').replace(/^(error|fatal): /, '').slice(0, 200);
}
