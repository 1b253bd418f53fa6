import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runProgram } from './programs.js';
import { DEMO_PR_REF, DEMO_SOURCE } from './spec.js';

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.email=hq@demo.invalid', '-c', 'user.name=Headquarters', ...args], {
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
    encoding: 'utf8',
  }).trim();

/**
 * Headquarters' side of the demo's delivered component: a repository with `main` (a clean plan) and an
 * open PR (`DEMO_PR_REF`, a plan with changes), and a `publisher` user that sends both to the site as a
 * git bundle with `hub source publish`, as a CI job would. Answers the repository's path.
 */
export async function publishDemoSource(dir: string, hubConfig: string, hubUrl: string): Promise<string> {
  const repo = join(dir, 'hq', DEMO_SOURCE.source.repo);
  const stack = join(repo, DEMO_SOURCE.source.path);
  mkdirSync(stack, { recursive: true });
  git(repo, 'init', '-q', '-b', 'main');
  writeFileSync(
    join(stack, 'main.tf'),
    `# ${DEMO_SOURCE.name}: planned by the site from headquarters' git bundles\n`,
  );
  const scenario = (state: string) => `${JSON.stringify({ seed: 77, steps: [{ state }] }, null, 2)}\n`;
  writeFileSync(join(stack, 'fake-terraform.json'), scenario('clean'));
  git(repo, 'add', '.');
  git(repo, 'commit', '-q', '-m', `${DEMO_SOURCE.name}: first version`);
  git(repo, 'checkout', '-q', '-b', DEMO_PR_REF);
  writeFileSync(join(stack, 'fake-terraform.json'), scenario('changes'));
  git(repo, 'commit', '-q', '-am', `${DEMO_SOURCE.name}: a proposed change`);
  git(repo, 'checkout', '-q', 'main');
  const user = JSON.parse(
    await runProgram('hub', [
      'user',
      'add',
      'demo-ci',
      '--role',
      'publisher',
      '--config',
      hubConfig,
      '--json',
    ]),
  ) as { token: string };
  const tokenFile = join(dir, 'hq', 'publisher.token');
  writeFileSync(tokenFile, `${user.token}\n`, { mode: 0o600 });
  const args = ['source', 'publish', '--repo', repo, '--ref', 'main', '--ref', 'pr/*'];
  await runProgram('hub', [...args, '--site', DEMO_SOURCE.site, '--hub', hubUrl, '--token-file', tokenFile]);
  return repo;
}
