import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { type LinkHandle, startLink } from '../src/link.js';
import { freePort, waitForHttp } from '../src/topology/ports.js';
import { BINS, runProgram } from '../src/topology/programs.js';
import { testObjProvider, testProviderEnv } from './pinnedProvider.js';
import { describeRealTerraform, realPath } from './realTerraform.js';
import { ProcessGroup, setUpHub, until } from './support.js';

/**
 * Headquarters proposes, the outpost plans (source as git bundles, providers as mirrors, offline
 * init), as processes: hub → relay → the Mars link compressed ×360 (2 s one way; the demo's ×60 made this
 * file take minutes for the same exchanges) → agent, and a second site behind a geostationary link whose
 * PR needs a provider it lacks. On the real terraform where it is on PATH (issue 28): the real Terraform
 * contract is the process lane's to keep; the same journey on the fake terraform is
 * `sourceRefs.world.test.ts`, in the deterministic world (docs/decisions/540-deterministic-world.md).
 */
const group = new ProcessGroup();
const links: LinkHandle[] = [];
let dir = '';
const dirs: string[] = [];
afterEach(async () => {
  await group.stopAll();
  for (const l of links.splice(0)) await l.close();
  if (dir) dirs.push(dir);
}, 60_000);
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.email=hq@example.org', '-c', 'user.name=hq', ...args], {
    cwd,
    encoding: 'utf8',
  }).trim();

/** Runs the hub CLI as a CI job would; answers its exit code and output. */
function hubCli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BINS.hub, ...args], { timeout: 900_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/**
 * A stack that plans `clean` or `changes`: HCL planned from a scratch checkout with no state (nothing but
 * a local: clean; a `terraform_data`: a create).
 */
function writeStack(repo: string, name: string, state: 'clean' | 'changes'): void {
  writeFileSync(
    join(repo, `stacks/${name}/main.tf`),
    `locals { stack = "${name}" }\n${state === 'changes' ? `resource "terraform_data" "${name}" { input = "v2" }\n` : ''}`,
  );
}

interface Cell {
  site: string;
  component: string;
  environment: string;
  status: string;
  commit?: string | null;
  ref?: string | null;
  needs?: string[];
}

async function refsJourney(): Promise<void> {
  dir = mkdtempSync(join(tmpdir(), 'driftline-refs-real-'));
  const [hubPort, relayPort] = [await freePort(), await freePort()];
  const {
    config: hubConfig,
    key,
    relayToken,
    api,
    url,
  } = await setUpHub(dir, hubPort, {
    name: 'ground-1',
    sites: ['mars-base', 'ship-7'],
  });
  const publisher = JSON.parse(
    await runProgram('hub', ['user', 'add', 'ci', '--role', 'publisher', '--config', hubConfig, '--json']),
  ).token as string;
  const tokenFile = join(dir, 'publisher.token');
  writeFileSync(tokenFile, publisher);
  const remote = ['--hub', url, '--token-file', tokenFile];

  // Headquarters' repository: two components, one of which pins a provider in its lock file.
  const repo = join(dir, 'infra');
  mkdirSync(join(repo, 'stacks/network'), { recursive: true });
  mkdirSync(join(repo, 'stacks/dns'), { recursive: true });
  git(repo, 'init', '-q', '-b', 'main');
  writeStack(repo, 'network', 'clean');
  writeStack(repo, 'dns', 'clean');
  git(repo, 'add', '.');
  git(repo, 'commit', '-qm', 'main');
  const mainSha = git(repo, 'rev-parse', 'HEAD');
  let prSha = '';

  const hubRelay = await startLink({
    name: 'hub-relay',
    target: { port: hubPort },
    profile: 'lan',
    controlPort: false,
  });
  const mars = await startLink({
    name: 'mars',
    target: { port: relayPort },
    profile: 'mars',
    timeScale: 360,
    controlPort: false,
  });
  // Always up: at ×360 Mars' own schedule would close its window after 80 s.
  mars.control.force('up');
  const geo = await startLink({
    name: 'geo',
    target: { port: relayPort },
    profile: 'geo',
    controlPort: false,
  });
  links.push(hubRelay, mars, geo);
  const relayConfig = join(dir, 'relay.yaml');
  writeFileSync(
    relayConfig,
    stringify({
      name: 'ground-1',
      dataDir: join(dir, 'relay'),
      listen: { port: relayPort },
      sites: ['mars-base', 'ship-7'],
      upstreams: [{ url: `http://127.0.0.1:${hubRelay.port}`, token: relayToken }],
      forward: { idleMs: 300, pullIntervalMs: 1000, backoffBaseMs: 300, backoffMaxMs: 1000 },
      publications: { intervalMs: 500 },
    }),
  );
  const site = async (name: string, link: LinkHandle, component: string) => {
    const d = join(dir, name);
    mkdirSync(d, { recursive: true });
    const token = JSON.parse(
      await runProgram('relay', ['token', 'add', name, '--config', relayConfig, '--json']),
    ).token;
    writeFileSync(join(d, 'token'), token);
    writeFileSync(join(d, 'hub.pub'), key);
    const config = join(d, 'agent.yaml');
    writeFileSync(
      config,
      stringify({
        site: name,
        agent: 'a1',
        dataDir: './data',
        hubPublicKeyFile: './hub.pub',
        upstreams: [{ url: `http://127.0.0.1:${link.port}`, tokenFile: './token' }],
        components: [
          {
            name: component,
            source: { repo: 'infra', path: `stacks/${component}`, refs: ['main', 'pr/*'] },
            environments: ['prod'],
            schedule: '0 0 1 1 *',
          },
        ],
        sync: { intervalS: 1, jitterS: 0, backoffBaseS: 0.5, backoffCapS: 2, planOnStart: false },
        publications: { accept: { 'provider-mirror': { dir: './providers' } }, retryMs: 500 },
      }),
    );
    const init = JSON.parse(await runProgram('agent', ['init', '--config', config, '--json']));
    await runProgram('hub', [
      'enroll',
      '--config',
      hubConfig,
      '--site',
      name,
      '--agent',
      'a1',
      '--key',
      init.publicKey,
    ]);
    return { dir: d, config };
  };
  const marsSite = await site('mars-base', mars, 'network');
  const ship = await site('ship-7', geo, 'dns');

  const hubProc = group.start(BINS.hub, ['run', '--config', hubConfig]);
  await waitForHttp(`${url}/v1/health`, 60_000, () => hubProc.exitCode === null);
  const relay = group.start(BINS.relay, ['run', '--config', relayConfig]);
  await waitForHttp(`http://127.0.0.1:${relayPort}/v1/health`, 60_000, () => relay.exitCode === null);
  // No network: the real terraform gets the agent's offline CLI configuration.
  for (const s of [marsSite, ship])
    group.start(BINS.agent, ['run', '--config', s.config], {
      cwd: s.dir,
      env: {
        PATH: realPath(),
        HOME: s.dir,
        TF_CLI_CONFIG_FILE: '',
        CHECKPOINT_DISABLE: '1',
        ...testProviderEnv(dir),
      },
    });
  const matrix = async (ref?: string) => {
    const r = await api(`/api/matrix${ref ? `?ref=${encodeURIComponent(ref)}` : ''}`);
    return ((await r.json()) as { cells: Cell[] }).cells;
  };
  /** Asks the hub for a plan of pr/1 at `prSha` (set once the PR exists). */
  const planPr = (siteName: string, component: string) =>
    api('/api/plan-requests', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ site: siteName, environment: 'prod', component, ref: 'pr/1', commit: prSha }),
    });
  const cell = async (siteName: string, ref?: string) => (await matrix(ref)).find((c) => c.site === siteName);

  // Main goes out as a full bundle (the sites have reported no heads yet) and is planned on arrival.
  await until('both agents to report their (empty) sources', async () => {
    const r = await api('/api/sources');
    const s = (await r.json()) as { sites: Array<{ site: string; platforms: string[] }> };
    return s.sites.filter((x) => x.platforms.length > 0).length === 2;
  });
  const first = await hubCli([
    'source',
    'publish',
    '--repo',
    repo,
    '--ref',
    'main',
    '--ref',
    'pr/*',
    '--site',
    'all',
    '--name',
    'infra',
    '--json',
    ...remote,
  ]);
  expect(first.stderr).toBe('');
  expect(first.code).toBe(0);
  expect(JSON.parse(first.stdout).published[0]).toMatchObject({ incremental: false });
  await until(
    'main to be planned at mars-base',
    async () => (await cell('mars-base'))?.commit === mainSha,
    600_000,
  );
  expect(await cell('mars-base')).toMatchObject({ status: 'clean', ref: 'main', commit: mainSha });

  // The provider build the PR will pin, as `terraform providers mirror` lays it out at headquarters: the
  // repository's test provider, which the real terraform runs.
  const pinned = testObjProvider(dir);
  const { mirrorDir, lockText } = pinned;
  const lock = join(dir, 'lock.hcl');
  writeFileSync(lock, lockText);

  // A PR: only its new commit crosses the links.
  git(repo, 'checkout', '-qb', 'pr/1');
  writeStack(repo, 'network', 'changes');
  writeFileSync(join(repo, 'stacks/dns/.terraform.lock.hcl'), lockText);
  if (pinned.stack) writeFileSync(join(repo, 'stacks/dns/main.tf'), pinned.stack);
  git(repo, 'add', '.');
  git(repo, 'commit', '-qm', 'pr 1');
  prSha = git(repo, 'rev-parse', 'HEAD');
  await until(
    'the sites to report main',
    async () => {
      const s = (await (await api('/api/sources')).json()) as {
        sites: Array<{ repos: Record<string, Record<string, string>> }>;
      };
      return s.sites.every((x) => x.repos.infra?.main === mainSha);
    },
    600_000,
  );
  const second = await hubCli([
    'source',
    'publish',
    '--repo',
    repo,
    '--ref',
    'main',
    '--ref',
    'pr/*',
    '--site',
    'mars-base,ship-7',
    '--json',
    ...remote,
  ]);
  expect(second.code).toBe(0);
  const out = JSON.parse(second.stdout);
  expect(out.published).toHaveLength(1);
  expect(out.published[0]).toMatchObject({ incremental: true, prerequisites: [mainSha] });

  const request = await planPr('mars-base', 'network');
  expect(request.status).toBe(201);
  await until(
    'the PR commit to be planned at Mars',
    async () => (await cell('mars-base', 'pr/1'))?.commit === prSha,
    600_000,
  );
  await until(
    'the dns plan of the PR at ship-7',
    async () => (await cell('ship-7', 'pr/1'))?.commit === prSha,
    300_000,
  );
  // ship-7's dns plan of pr/1 is blocked (a provider is missing): the CI gate says so (exit 1).
  const wait = await hubCli([
    'refs',
    'wait',
    '--ref',
    'pr/1',
    '--commit',
    prSha,
    '--timeout',
    '10s',
    '--interval',
    '1s',
    ...remote,
  ]);
  expect(wait.code).toBe(1);
  expect(await cell('mars-base', 'pr/1')).toMatchObject({ status: 'changes', ref: 'pr/1', commit: prSha });
  const blocked = await cell('ship-7', 'pr/1');
  expect(blocked).toMatchObject({ status: 'blocked', commit: prSha, needs: [pinned.need] });
  const needs = (await (await api('/api/needs')).json()) as {
    needs: Array<{ site: string; need: string }>;
  };
  expect(needs.needs).toContainEqual(expect.objectContaining({ site: 'ship-7', need: pinned.need }));

  // Headquarters publishes what the lock file needs; the next plan of the same commit succeeds offline.
  const mirrorPub = await hubCli([
    'mirror',
    'publish',
    '--lock-file',
    lock,
    '--dir',
    mirrorDir,
    '--site',
    'ship-7',
    ...remote,
  ]);
  expect(mirrorPub.stderr).toBe('');
  expect(mirrorPub.code).toBe(0);
  await until(
    'the provider to be placed at ship-7',
    async () => existsSync(join(ship.dir, 'providers', pinned.zipPath)),
    300_000,
  );
  // The stack creates one object with the test provider.
  const planned = 'changes';
  const again = await planPr('ship-7', 'dns');
  expect(again.status).toBe(201);
  await until(
    'the dns plan of the same commit to succeed',
    async () => (await cell('ship-7', 'pr/1'))?.status === planned,
    300_000,
  );
  const gate = await hubCli([
    'refs',
    'wait',
    '--ref',
    'pr/1',
    '--commit',
    prSha,
    '--timeout',
    '10m',
    '--interval',
    '2s',
    ...remote,
  ]);
  expect(gate.stderr).toContain('complete: 2/2 complete, 0 pending, 0 blocked, 0 failed');
  expect(gate.code).toBe(0);
  expect(await cell('ship-7', 'pr/1')).toMatchObject({ status: planned, commit: prSha });
}

describeRealTerraform('plans of what headquarters proposes, over the demo links', () => {
  it(
    'a PR commit published as a git bundle is planned at Mars, offline init included; a missing provider blocks before init, then is published and the plan runs it',
    {
      timeout: 900_000,
    },
    () => refsJourney(),
  );
});
