import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runProgram } from './programs.js';
import { realStackText } from './realStacks.js';
import { layout } from './setup.js';
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
export async function publishDemoSource(
  dir: string,
  hubConfig: string,
  hubUrl: string,
  terraform: 'fake' | 'real' = 'fake',
): Promise<string> {
  const repo = join(dir, 'hq', DEMO_SOURCE.source.repo);
  const stack = join(repo, DEMO_SOURCE.source.path);
  mkdirSync(stack, { recursive: true });
  git(repo, 'init', '-q', '-b', 'main');
  // main proposes a change to approve and apply (then plans clean); the PR proposes another one.
  const version = (v: number) => {
    if (terraform === 'real') {
      // The site plans a scratch checkout of each commit: the state lives at a fixed path at the site.
      const state = join(layout(dir).siteDir(DEMO_SOURCE.site), 'tfstate', `${DEMO_SOURCE.name}.tfstate`);
      writeFileSync(
        join(stack, 'main.tf'),
        `terraform {\n  backend "local" { path = ${JSON.stringify(state)} }\n}\n${realStackText(DEMO_SOURCE.name, 'prod', v + 1)}`,
      );
      return;
    }
    writeFileSync(
      join(stack, 'main.tf'),
      `# ${DEMO_SOURCE.name}: planned by the site from headquarters' git bundles\n`,
    );
    writeFileSync(
      join(stack, 'fake-terraform.json'),
      `${JSON.stringify({ seed: 77, loop: false, steps: [{ state: 'changes', variant: v }] }, null, 2)}\n`,
    );
  };
  version(0);
  git(repo, 'add', '.');
  git(repo, 'commit', '-q', '-m', `${DEMO_SOURCE.name}: first version`);
  git(repo, 'checkout', '-q', '-b', DEMO_PR_REF);
  version(1);
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

/** The demo approver's key pair (`hub approver keygen`), made before the agents start: they pin it. */
export async function demoApproverKey(dir: string): Promise<{ keyFile: string; publicKey: string }> {
  const keyFile = join(dir, 'hq', 'approver.pem');
  mkdirSync(join(dir, 'hq'), { recursive: true });
  const out = await runProgram('hub', ['approver', 'keygen', '--out', keyFile]);
  const publicKey = /ed25519:[A-Za-z0-9_-]{43}/.exec(out)?.[0];
  if (!publicKey) throw new Error(`hub approver keygen printed no public key: ${out.slice(0, 200)}`);
  return { keyFile, publicKey };
}

/** Names the demo approver at the hub and gives them a token to submit approvals with. */
export async function addDemoApprover(dir: string, hubConfig: string, publicKey: string): Promise<string> {
  await runProgram('hub', ['approver', 'add', 'demo-approver', '--key', publicKey, '--config', hubConfig]);
  const user = JSON.parse(
    await runProgram('hub', [
      'user',
      'add',
      'demo-approver',
      '--role',
      'approver',
      '--config',
      hubConfig,
      '--json',
    ]),
  ) as { token: string };
  const tokenFile = join(dir, 'hq', 'approver.token');
  writeFileSync(tokenFile, `${user.token}\n`, { mode: 0o600 });
  return tokenFile;
}
