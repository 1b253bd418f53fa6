import { execFile } from 'node:child_process';
import { refMatches, refNameProblem } from '@driftline/protocol';

/**
 * What `hub source publish` asks of the system `git` (Debian package `git`): the branches to send and
 * an incremental `git bundle` on top of the commits a site already holds. Nothing reimplements git.
 */

export interface GitRun {
  ok: boolean;
  stdout: string;
  stderr: string;
}

export function runGit(repo: string, args: string[]): Promise<GitRun> {
  return new Promise((resolve) => {
    execFile(
      'git',
      ['-C', repo, '-c', 'core.hooksPath=/dev/null', ...args],
      {
        maxBuffer: 64 * 1024 * 1024,
        timeout: 600_000,
        env: { ...process.env, LC_ALL: 'C', GIT_TERMINAL_PROMPT: '0' },
      },
      (err, stdout, stderr) => resolve({ ok: !err, stdout: String(stdout), stderr: String(stderr) }),
    );
  });
}

const firstLine = (t: string) => (t.split('\n').find((l) => l.trim()) ?? '').replace(/^(fatal|error): /, '');

/** The repository's branches matching any of `patterns`: branch → commit. Problems name the pattern. */
export async function selectBranches(
  repo: string,
  patterns: readonly string[],
): Promise<{ ok: true; branches: Record<string, string> } | { ok: false; problem: string }> {
  const probe = await runGit(repo, ['rev-parse', '--git-dir']);
  if (!probe.ok)
    return { ok: false, problem: `--repo ${repo} is not a git repository (${firstLine(probe.stderr)})` };
  for (const p of patterns) {
    const problem = refNameProblem(p.replaceAll('*', 'x'));
    if (problem) return { ok: false, problem: `--ref ${JSON.stringify(p)}: ${problem}` };
  }
  const list = await runGit(repo, ['for-each-ref', '--format=%(objectname) %(refname)', 'refs/heads/']);
  if (!list.ok) return { ok: false, problem: `git for-each-ref failed: ${firstLine(list.stderr)}` };
  const branches: Record<string, string> = {};
  for (const line of list.stdout.split('\n')) {
    const [sha, name] = line.trim().split(' ', 2);
    if (!sha || !name?.startsWith('refs/heads/')) continue;
    const branch = name.slice('refs/heads/'.length);
    if (refNameProblem(branch)) continue; // a branch a site would refuse is never sent
    if (patterns.some((p) => refMatches(p, branch))) branches[branch] = sha;
  }
  for (const p of patterns)
    if (!p.includes('*') && !(p in branches))
      return { ok: false, problem: `--ref ${p}: the repository has no branch ${p}` };
  if (Object.keys(branches).length === 0)
    return { ok: false, problem: `no branch matches ${patterns.map((p) => JSON.stringify(p)).join(', ')}` };
  return { ok: true, branches };
}

/** The site's heads that this repository also holds: the bundle's prerequisites (sorted, unique). */
export async function knownCommits(repo: string, siteHeads: Record<string, string>): Promise<string[]> {
  const out = new Set<string>();
  for (const sha of Object.values(siteHeads)) {
    if (!/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(sha) || out.has(sha)) continue;
    if ((await runGit(repo, ['cat-file', '-e', `${sha}^{commit}`])).ok) out.add(sha);
  }
  return [...out].sort();
}

/**
 * `git bundle create` of `branches` minus everything reachable from `prerequisites`. Null when the site
 * already holds every commit (git refuses an empty bundle).
 */
export async function createBundle(
  repo: string,
  file: string,
  branches: readonly string[],
  prerequisites: readonly string[],
): Promise<{ ok: true; created: boolean } | { ok: false; problem: string }> {
  const r = await runGit(repo, [
    'bundle',
    'create',
    '--quiet',
    file,
    ...branches.map((b) => `refs/heads/${b}`),
    ...prerequisites.map((p) => `^${p}`),
  ]);
  if (r.ok) return { ok: true, created: true };
  if (/Refusing to create empty bundle/i.test(r.stderr)) return { ok: true, created: false };
  return { ok: false, problem: `git bundle create failed: ${firstLine(r.stderr)}` };
}
