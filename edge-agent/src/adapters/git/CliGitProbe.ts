import { execFile } from 'node:child_process';
import type { GitInfo, GitProbe } from '../../ports/PlanWorkspace.js';

function git(dir: string, args: string[]): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile('git', ['-C', dir, ...args], { timeout: 10_000, maxBuffer: 1024 * 1024 }, (err, stdout) => {
      resolve(err ? undefined : stdout.trim());
    });
  });
}

/** Reads commit, branch and dirtiness with the `git` program; undefined outside a repository. */
export class CliGitProbe implements GitProbe {
  async describe(dir: string): Promise<GitInfo | undefined> {
    const commit = await git(dir, ['rev-parse', 'HEAD']);
    if (!commit || !/^[0-9a-f]{7,64}$/.test(commit)) return undefined;
    const info: GitInfo = { commit };
    const branch = await git(dir, ['rev-parse', '--abbrev-ref', 'HEAD']);
    if (branch && branch !== 'HEAD' && branch.length <= 255) info.branch = branch;
    const status = await git(dir, ['status', '--porcelain', '--untracked-files=no']);
    if (status !== undefined) info.dirty = status !== '';
    return info;
  }
}
