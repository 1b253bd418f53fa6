import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { profileSettings } from '../src/core/link/profiles.js';
import { runProgram } from '../src/topology/programs.js';
import { worldTmp } from '../src/world/World.js';
import { worldUrl } from '../src/world/WorldNetwork.js';
import { fakeAws } from './pinnedProvider.js';
import { setUpHub, until } from './support.js';
import { RELAY, startVirtualHeadquarters, type VirtualHeadquarters } from './virtualHeadquarters.js';

/**
 * Headquarters proposes, the outpost plans (source as git bundles, providers as mirrors, offline init), in
 * the deterministic world (docs/decisions/540-deterministic-world.md): hub → relay → the Mars link
 * compressed ×360 (2 s one way, its bandwidths) → agent, and a second site behind a geostationary link
 * whose PR needs a provider it lacks; hub, relay and agents built by their programs' factories in one
 * process, headquarters' `hub source publish`, `hub mirror publish` and `hub refs wait` as the programs on
 * the hub's socket, their clock the world's, the world standing still while they run. Headquarters' git
 * and the agents' are real git. On the fake terraform; the real one's case stays a process test
 * (`sourceRefs.test.ts`).
 */
const MARS = profileSettings('mars', 360);
const GEO = profileSettings('geo');
if (!MARS.ok) throw new Error(MARS.problem);
if (!GEO.ok) throw new Error(GEO.problem);
/** Mars, one way, ms (12 minutes ×360). */
const D = MARS.oneWayDelayMs;
let dir = '';
let hq: VirtualHeadquarters | null = null;
afterAll(async () => {
  await hq?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.email=hq@example.org', '-c', 'user.name=hq', ...args], {
    cwd,
    encoding: 'utf8',
  }).trim();

/** A stack that plans `clean` or `changes`: the fake's scenario. */
function writeStack(repo: string, name: string, state: 'clean' | 'changes'): void {
  writeFileSync(join(repo, `stacks/${name}/main.tf`), `# ${name}\n`);
  writeFileSync(
    join(repo, `stacks/${name}/fake-terraform.yaml`),
    `seed: 5\nsteps:\n  - { state: ${state} }\n`,
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

describe('plans of what headquarters proposes, over the demo links (fake terraform, the world)', () => {
  it('a PR commit published as a git bundle is planned at Mars and gates CI; a missing provider blocks, then is published', async () => {
    dir = mkdtempSync(join(worldTmp(), 'driftline-refs-world-'));
    // The files, made by the programs' own commands before the world starts, as the process test did.
    const hub = await setUpHub(dir, 0, { name: RELAY, sites: ['mars-base', 'ship-7'] });
    const publisher = JSON.parse(
      await runProgram('hub', ['user', 'add', 'ci', '--role', 'publisher', '--config', hub.config, '--json']),
    ).token as string;
    const tokenFile = join(dir, 'publisher.token');
    writeFileSync(tokenFile, publisher);

    // Headquarters' repository: two components, one of which will pin a provider in its lock file.
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

    const relayConfig = join(dir, 'relay.yaml');
    writeFileSync(
      relayConfig,
      stringify({
        name: RELAY,
        dataDir: join(dir, 'relay'),
        listen: { port: 0 },
        sites: ['mars-base', 'ship-7'],
        upstreams: [{ url: worldUrl('hub'), token: hub.relayToken }],
        forward: { idleMs: 300, pullIntervalMs: 1000, backoffBaseMs: 300, backoffMaxMs: 1000 },
        publications: { intervalMs: 500 },
      }),
    );
    const site = async (name: string, component: string) => {
      const d = join(dir, name);
      mkdirSync(d, { recursive: true });
      const token = JSON.parse(
        await runProgram('relay', ['token', 'add', name, '--config', relayConfig, '--json']),
      ).token;
      writeFileSync(join(d, 'token'), token);
      writeFileSync(join(d, 'hub.pub'), hub.key);
      const config = join(d, 'agent.yaml');
      writeFileSync(
        config,
        stringify({
          site: name,
          agent: 'a1',
          dataDir: './data',
          hubPublicKeyFile: './hub.pub',
          upstreams: [{ url: worldUrl(RELAY), tokenFile: './token' }],
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
        hub.config,
        '--site',
        name,
        '--agent',
        'a1',
        '--key',
        init.publicKey,
      ]);
      return { dir: d, config };
    };
    const marsSite = await site('mars-base', 'network');
    const ship = await site('ship-7', 'dns');

    // Mars always up (as the process test forced it: its own schedule is not what is asserted); no
    // network at the sites: the fake terraform fails a registry lookup unless FAKE_TERRAFORM_NETWORK=1.
    hq = await startVirtualHeadquarters({
      hubConfig: hub.config,
      adminToken: hub.adminToken,
      relayConfig,
      relayToken: hub.relayToken,
      sites: [
        {
          name: 'mars-base',
          dir: marsSite.dir,
          agentConfig: marsSite.config,
          link: { ...MARS.settings, schedule: null },
          toolEnv: { FAKE_TERRAFORM_NETWORK: '0' },
        },
        {
          name: 'ship-7',
          dir: ship.dir,
          agentConfig: ship.config,
          link: GEO.settings,
          toolEnv: { FAKE_TERRAFORM_NETWORK: '0' },
        },
      ],
      seed: 60,
    });
    const w = hq;
    const remote = w.remote(tokenFile);
    const matrix = async (ref?: string) => {
      const r = await w.api(`/api/matrix${ref ? `?ref=${encodeURIComponent(ref)}` : ''}`);
      return ((await r.json()) as { cells: Cell[] }).cells;
    };
    /** Asks the hub for a plan of pr/1 at `prSha` (set once the PR exists). */
    const planPr = (siteName: string, component: string) =>
      w.api('/api/plan-requests', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ site: siteName, environment: 'prod', component, ref: 'pr/1', commit: prSha }),
      });
    const cell = async (siteName: string, ref?: string) =>
      (await matrix(ref)).find((c) => c.site === siteName);

    // Main goes out as a full bundle (the sites have reported no heads yet) and is planned on arrival.
    await until('both agents to report their (empty) sources', async () => {
      const r = await w.api('/api/sources');
      const s = (await r.json()) as { sites: Array<{ site: string; platforms: string[] }> };
      return s.sites.filter((x) => x.platforms.length > 0).length === 2;
    });
    const first = await w.hq([
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
    const published = Date.now();
    await until(
      'main to be planned at mars-base',
      async () => (await cell('mars-base'))?.commit === mainSha,
      600_000,
    );
    expect(await cell('mars-base')).toMatchObject({ status: 'clean', ref: 'main', commit: mainSha });
    // No sooner than light: the bundle down to Mars, the plan's result up.
    expect(Date.now() - published).toBeGreaterThanOrEqual(2 * D);

    // The provider build the PR will pin, as `terraform providers mirror` lays it out at headquarters: a
    // stand-in the fake installs.
    const pinned = fakeAws(dir);
    const { mirrorDir, lockText } = pinned;
    const lock = join(dir, 'lock.hcl');
    writeFileSync(lock, lockText);

    // A PR: only its new commit crosses the links.
    git(repo, 'checkout', '-qb', 'pr/1');
    writeStack(repo, 'network', 'changes');
    writeFileSync(join(repo, 'stacks/dns/.terraform.lock.hcl'), lockText);
    git(repo, 'add', '.');
    git(repo, 'commit', '-qm', 'pr 1');
    prSha = git(repo, 'rev-parse', 'HEAD');
    await until(
      'the sites to report main',
      async () => {
        const s = (await (await w.api('/api/sources')).json()) as {
          sites: Array<{ repos: Record<string, Record<string, string>> }>;
        };
        return s.sites.every((x) => x.repos.infra?.main === mainSha);
      },
      600_000,
    );
    const second = await w.hq([
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
    // ship-7's dns plan of pr/1 is blocked (a provider is missing): the CI gate says so (exit 1), at once:
    // the world stands still while it asks, so what it reads is what the hub holds now.
    const wait = await w.hq([
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
    expect(wait.stdout).toBe(
      `ref pr/1 at ${prSha.slice(0, 12)}: blocked\n  blocked\tship-7 prod/dns\tneeds ${pinned.need}\tproviders-missing\n`,
    );
    expect(wait.stderr).toContain('blocked: 1/2 complete, 0 pending, 1 blocked, 0 failed');
    expect(await cell('mars-base', 'pr/1')).toMatchObject({ status: 'changes', ref: 'pr/1', commit: prSha });
    const blocked = await cell('ship-7', 'pr/1');
    expect(blocked).toMatchObject({ status: 'blocked', commit: prSha, needs: [pinned.need] });
    const needs = (await (await w.api('/api/needs')).json()) as {
      needs: Array<{ site: string; need: string }>;
    };
    expect(needs.needs).toContainEqual(expect.objectContaining({ site: 'ship-7', need: pinned.need }));

    // Headquarters publishes what the lock file needs; the next plan of the same commit succeeds offline.
    const mirrorPub = await w.hq([
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
    // The fake's scenario plans clean.
    const again = await planPr('ship-7', 'dns');
    expect(again.status).toBe(201);
    await until(
      'the dns plan of the same commit to succeed',
      async () => (await cell('ship-7', 'pr/1'))?.status === 'clean',
      300_000,
    );
    // The gate decides at its first look: the world stands still while it asks, so a longer timeout (a CI
    // job's) could only wait on the machine's clock for a hub that cannot change meanwhile.
    const gate = await w.hq([
      'refs',
      'wait',
      '--ref',
      'pr/1',
      '--commit',
      prSha,
      '--timeout',
      '10s',
      '--interval',
      '2s',
      ...remote,
    ]);
    expect(gate.stderr).toContain('complete: 2/2 complete, 0 pending, 0 blocked, 0 failed');
    expect(gate.code).toBe(0);
    expect(gate.stdout).toBe(`ref pr/1 at ${prSha.slice(0, 12)}: complete\n`);
    expect(await cell('ship-7', 'pr/1')).toMatchObject({ status: 'clean', commit: prSha });
  });
});
