import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { type LinkConfig, type LinkHandle, startLink } from '../src/link.js';
import { freePort, waitForHttp } from '../src/topology/ports.js';
import { BINS, commandFor, FAKE_TERRAFORM_DIR, runProgram } from '../src/topology/programs.js';
import { fakeAws } from './pinnedProvider.js';
import { ProcessGroup, setUpHub, until } from './support.js';

/**
 * A site made busy (docs/decisions/270-control-first.md), as processes: hub ← lan ← relay ← a slow,
 * delayed link ← agent with the fake terraform. Its one component plans from headquarters' repository
 * with apply allowed by one approver; the plan is big, so its detail upload outlasts what a test or the
 * bench `controlLatency` sends down meanwhile (an approval, a provider mirror). Used by both.
 */
export interface BusySiteOptions {
  dir: string;
  /** The agent's link (profile, time scale and settings as `startLink` takes them). */
  link: Pick<LinkConfig, 'profile' | 'timeScale' | 'settings'>;
  /** Resources the fake adds to the plan, each changed (`extraChanges`): what makes the detail big. */
  extraResources: number;
  /** The agent's `sync` settings over the test defaults (jitter 0, quick backoff, no plan at start). */
  sync?: Record<string, unknown>;
  /** The relay's pulls from the hub, ms (the demo's 1 s by default: what it adds to the floor). */
  relayPullIntervalMs?: number;
}

export interface AgentLine {
  msg?: string;
  time?: number;
  level?: number;
  runId?: string;
  state?: string;
  kind?: string;
  [k: string]: unknown;
}

interface Journey {
  approvalId: string;
  runId: string;
  state: string;
  reason: string | null;
  submittedAt: string;
  deliveredAt: string | null;
  nextRunId: string | null;
}

const SITE = 'mars-base';

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.email=hq@example.org', '-c', 'user.name=hq', ...args], {
    cwd,
    encoding: 'utf8',
  }).trim();

/** Log lines of the agent that mean a downlink bundle reached it. */
const DOWNLINK = ['hub acknowledged', 'publication announced', 'approval received', 'plan request received'];

/** What `prepareBusySite` made with the programs' own commands, before any node runs. */
export interface PreparedBusySite {
  dir: string;
  hub: Awaited<ReturnType<typeof setUpHub>>;
  ciToken: string;
  adaToken: string;
  keyFile: string;
  repo: string;
  commit: string;
  relayConfig: string;
  agentConfig: string;
  siteDir: string;
}

/**
 * The busy site's files, made as an operator would (`hub init`, users, an approver, `relay token add`,
 * `edge-agent init`, `hub enroll`) and headquarters' repository: the same for processes and for the
 * deterministic world (`virtualBusySite.ts`); `at` says where the hub listens, where relay-1 forwards
 * to and where the agent sends.
 */
export async function prepareBusySite(
  o: BusySiteOptions,
  at: { hubPort: number; relayPort: number; relayUpstream: string; agentUpstream: string },
): Promise<PreparedBusySite> {
  const { dir } = o;
  const hub = await setUpHub(dir, at.hubPort, { name: 'ground-1', sites: [SITE] });
  const token = async (name: string, role: string) => {
    const add = ['user', 'add', name, '--role', role, '--config', hub.config, '--json'];
    const f = join(dir, `${name}.token`);
    writeFileSync(f, (JSON.parse(await runProgram('hub', add)) as { token: string }).token);
    return f;
  };
  const ciToken = await token('ci', 'publisher');
  const adaToken = await token('ada', 'approver');
  const keyFile = join(dir, 'ada.pem');
  const keygen = await runProgram('hub', ['approver', 'keygen', '--out', keyFile]);
  const approverKey = /ed25519:[A-Za-z0-9_-]{43}/.exec(keygen)?.[0];
  if (!approverKey) throw new Error(`hub approver keygen printed no key: ${keygen}`);
  await runProgram('hub', ['approver', 'add', 'Ada', '--key', approverKey, '--config', hub.config]);

  // Headquarters' repository: main proposes a change (one state, repeated: changes until applied).
  const repo = join(dir, 'infra');
  mkdirSync(join(repo, 'stacks/app'), { recursive: true });
  git(repo, 'init', '-q', '-b', 'main');
  writeFileSync(join(repo, 'stacks/app/main.tf'), '# app\n');
  writeFileSync(
    join(repo, 'stacks/app/fake-terraform.yaml'),
    `seed: 9\nloop: false\nextraResources: ${o.extraResources}\nextraChanges: true\nsteps:\n  - { state: changes }\n`,
  );
  git(repo, 'add', '.');
  git(repo, 'commit', '-qm', 'app: a change to apply');
  const commit = git(repo, 'rev-parse', 'HEAD');

  const relayConfig = join(dir, 'relay.yaml');
  writeFileSync(
    relayConfig,
    stringify({
      name: 'ground-1',
      dataDir: join(dir, 'relay'),
      listen: { port: at.relayPort },
      sites: [SITE],
      upstreams: [{ url: at.relayUpstream, token: hub.relayToken }],
      forward: {
        idleMs: 300,
        pullIntervalMs: o.relayPullIntervalMs ?? 1000,
        backoffBaseMs: 300,
        backoffMaxMs: 1000,
      },
      publications: { intervalMs: 500 },
    }),
  );
  const siteDir = join(dir, SITE);
  mkdirSync(siteDir, { recursive: true });
  const agentToken = JSON.parse(
    await runProgram('relay', ['token', 'add', SITE, '--config', relayConfig, '--json']),
  ).token;
  writeFileSync(join(siteDir, 'token'), agentToken);
  writeFileSync(join(siteDir, 'hub.pub'), hub.key);
  const agentConfig = join(siteDir, 'agent.yaml');
  writeFileSync(
    agentConfig,
    stringify({
      site: SITE,
      agent: 'a1',
      dataDir: './data',
      hubPublicKeyFile: './hub.pub',
      upstreams: [{ url: at.agentUpstream, tokenFile: './token' }],
      components: [
        {
          name: 'app',
          source: { repo: 'infra', path: 'stacks/app', refs: ['main'] },
          environments: ['prod'],
          schedule: '0 0 1 1 *',
          apply: { refs: ['main'], approvers: [approverKey], quorum: 1, maxApprovalAgeS: 86_400 },
        },
      ],
      sync: { jitterS: 0, backoffBaseS: 0.5, backoffCapS: 2, planOnStart: false, ...o.sync },
      publications: { accept: { 'provider-mirror': { dir: './providers' } }, retryMs: 500 },
    }),
  );
  const init = JSON.parse(await runProgram('agent', ['init', '--config', agentConfig, '--json']));
  await runProgram('hub', [
    'enroll',
    '--config',
    hub.config,
    '--site',
    SITE,
    '--agent',
    'a1',
    '--key',
    init.publicKey,
  ]);
  return { dir, hub, ciToken, adaToken, keyFile, repo, commit, relayConfig, agentConfig, siteDir };
}

/**
 * What a test or the bench does with a busy site, whatever runs it: the hub's API (`api`), where its
 * remote commands reach it (`hubUrl`), the agent's log lines, and the floor as the links give it.
 */
export function busySiteActions(
  p: PreparedBusySite,
  api: (path: string, init?: RequestInit) => Promise<Response>,
  hubUrl: string,
  lines: AgentLine[],
  floorMs: () => Promise<number>,
  /** The environment of headquarters' commands (a world gives them its clock: `virtualBusySite.ts`). */
  hqEnv: () => NodeJS.ProcessEnv = () => ({}),
) {
  const { dir, repo } = p;
  const remote = (tokenFile: string) => ['--hub', hubUrl, '--token-file', tokenFile];
  const cell = async () => {
    const r = (await (await api(`/api/matrix?site=${SITE}`)).json()) as {
      cells: { component: string; status: string; runId: string | null; commit?: string | null }[];
    };
    return r.cells.find((x) => x.component === 'app');
  };
  return {
    site: SITE,
    api,
    commit: p.commit,
    /** The agent's log lines so far. */
    lines,
    /** The first agent log line with message `msg` (and matching `f`), or undefined. */
    line: (msg: string, f: (l: AgentLine) => boolean = () => true) =>
      lines.find((l) => l.msg === msg && f(l)),
    cell,
    journey: async (runId: string) => {
      const r = (await (await api(`/api/approvals?site=${SITE}`)).json()) as { approvals: Journey[] };
      return r.approvals.find((j) => j.runId === runId);
    },
    detailState: async (runId: string) =>
      ((await (await api(`/api/runs/${runId}`)).json()) as { detailState?: string }).detailState,
    /** `hub source publish` of main to the site; then waits until the cell shows its plan. */
    async publishAndPlan(waitMs: number) {
      await runProgram(
        'hub',
        [
          'source',
          'publish',
          '--repo',
          repo,
          '--ref',
          'main',
          '--site',
          SITE,
          '--name',
          'infra',
          ...remote(p.ciToken),
        ],
        { env: hqEnv() },
      );
      const planned = await until(
        'the change to be planned at the site',
        async () => {
          const x = await cell();
          return x?.status === 'changes' && x.commit === p.commit ? x : undefined;
        },
        waitMs,
      );
      return planned.runId as string;
    },
    /**
     * Waits until the agent's held pull is surely at the relay (docs/decisions/270-control-first.md): its
     * last downlink came at least one light time `d` ago (plus 1 s) and less than 55 s ago (the shortest
     * hold, an older relay's); with one held pull, after an answer none is there for two light times, and
     * the hold's end starts another such gap (two since docs/decisions/340-no-gap-between-held-pulls.md:
     * this still serves an agent with `sync.heldPulls: 1`). Answers how long ago that downlink came, ms.
     */
    async heldPullWaiting(d: number): Promise<number> {
      const last = () =>
        Math.max(0, ...lines.filter((l) => DOWNLINK.includes(l.msg ?? '')).map((l) => l.time ?? 0));
      if (last() === 0) throw new Error('the agent has had no downlink yet: no held pull to wait for');
      await until(
        'one light time after the last downlink',
        async () => Date.now() - last() >= d + 1000,
        10 * d,
        50,
      );
      const age = Date.now() - last();
      if (age > 50_000)
        throw new Error(
          `the last downlink came ${age} ms ago: a 55 s hold (an older relay's) may have ended; send sooner after one`,
        );
      return age;
    },
    /**
     * Waits (up to `withinMs`) for the agent's next downlink, so what is sent then finds the held pull
     * that brought it answered, on its way down: the worst moment for a single held pull (decision 340).
     * Answers whether one came.
     */
    async nextDownlink(withinMs: number): Promise<boolean> {
      const count = () => lines.filter((l) => DOWNLINK.includes(l.msg ?? '')).length;
      const seen = count();
      try {
        await until('the agent’s next downlink', async () => count() > seen, withinMs, 20);
        return true;
      } catch {
        return false;
      }
    },
    /** `hub approve` of `runId` by Ada. */
    approve: (runId: string) =>
      runProgram(
        'hub',
        ['approve', '--key', p.keyFile, '--run', runId, '--expires', '2h', ...remote(p.adaToken)],
        { env: hqEnv() },
      ),
    /** `hub mirror publish` of a provider build (the fake's stand-in) to the site; its `publishedAt` (ms). */
    async publishMirror(): Promise<number> {
      const pinned = fakeAws(dir);
      const lock = join(dir, 'lock.hcl');
      writeFileSync(lock, pinned.lockText);
      const args = ['mirror', 'publish', '--lock-file', lock, '--dir', pinned.mirrorDir, '--site', SITE];
      await runProgram('hub', [...args, ...remote(p.ciToken)], { env: hqEnv() });
      const r = (await (await api(`/api/publications?site=${SITE}`)).json()) as {
        publications: { fileKind: string; publishedAt: string }[];
      };
      const mirror = r.publications.find((x) => x.fileKind === 'provider-mirror');
      if (!mirror) throw new Error('the hub lists no provider-mirror publication after hub mirror publish');
      return Date.parse(mirror.publishedAt);
    },
    floorMs,
  };
}

export async function startBusySite(o: BusySiteOptions) {
  const group = new ProcessGroup();
  const links: LinkHandle[] = [];
  let agent: ChildProcess | null = null;
  const close = async () => {
    if (agent && agent.exitCode === null && agent.signalCode === null) {
      const gone = new Promise((r) => agent?.once('exit', r));
      agent.kill('SIGTERM');
      await gone;
    }
    await group.stopAll();
    for (const l of links.splice(0)) await l.close();
  };
  try {
    const [hubPort, relayPort] = [await freePort(), await freePort()];
    const hubLink = await startLink({
      name: 'hub-relay',
      target: { port: hubPort },
      profile: 'lan',
      controlPort: false,
    });
    links.push(hubLink);
    const siteLink = await startLink({
      name: 'site',
      target: { port: relayPort },
      controlPort: false,
      ...o.link,
    });
    links.push(siteLink);
    siteLink.control.force('up'); // a profile's contact window is not what is measured
    const p = await prepareBusySite(o, {
      hubPort,
      relayPort,
      relayUpstream: `http://127.0.0.1:${hubLink.port}`,
      agentUpstream: `http://127.0.0.1:${siteLink.port}`,
    });
    const { hub } = p;
    const hubProc = group.start(BINS.hub, ['run', '--config', hub.config]);
    await waitForHttp(`${hub.url}/v1/health`, 60_000, () => hubProc.exitCode === null);
    const relay = group.start(BINS.relay, ['run', '--config', p.relayConfig]);
    await waitForHttp(`http://127.0.0.1:${relayPort}/v1/health`, 60_000, () => relay.exitCode === null);

    // The agent's own log (JSON lines, `time` in ms) says when it recorded what.
    const lines: AgentLine[] = [];
    const c = commandFor(BINS.agent);
    agent = spawn(c.cmd, [...c.args, 'run', '--config', p.agentConfig], {
      cwd: p.siteDir,
      env: {
        ...process.env,
        LOG_LEVEL: 'info',
        PATH: `${FAKE_TERRAFORM_DIR}:${process.env.PATH}`,
        FAKE_TERRAFORM_STATE_DIR: join(p.siteDir, 'tfstate'),
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let rest = '';
    agent.stderr?.on('data', (d: Buffer) => {
      const parts = (rest + d.toString()).split('\n');
      rest = parts.pop() ?? '';
      for (const part of parts) {
        try {
          lines.push(JSON.parse(part) as AgentLine);
        } catch {}
      }
    });
    /**
     * The floor, measured: hub → relay → agent light time, as half the round trip of a health request
     * over each link (the relay's through the site's link, the hub's through the lan link).
     */
    const floorMs = async (): Promise<number> => {
      const half = async (url: string) => {
        const t0 = performance.now();
        const r = await fetch(url);
        await r.arrayBuffer();
        if (!r.ok) throw new Error(`${url} answered ${r.status}`);
        return (performance.now() - t0) / 2;
      };
      return (
        (await half(`http://127.0.0.1:${siteLink.port}/v1/health`)) +
        (await half(`http://127.0.0.1:${hubLink.port}/v1/health`))
      );
    };
    return { ...busySiteActions(p, hub.api, hub.url, lines, floorMs), siteLink, hubLink, close };
  } catch (e) {
    await close();
    throw e;
  }
}

export type BusySite = Awaited<ReturnType<typeof startBusySite>>;
