import { type ChildProcess, spawn } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import type { LinkSettingsInput } from '../../src/core/link/settings.js';
import { waitForHttp } from '../../src/topology/ports.js';
import { BINS, commandFor, FAKE_TERRAFORM_DIR, runProgram } from '../../src/topology/programs.js';
import type { Attack } from '../../src/world/hostile/hostileHandler.js';
import { hubApi, setUpHub, until } from '../support.js';
import { type HostileProxy, startHostileProxy } from './hostileProxy.js';

/**
 * The hostile-relay topology, as real processes on 127.0.0.1: a hub, one honest relay (`relay-1`) and
 * agents, with hostile proxies (`hostileProxy.ts`) where the options put them:
 *
 *   agent ──► [agentSide proxy] ──► relay-1 ──► [upstream proxies] ──► hub
 *
 * `agentsVia: 'proxy'` puts one proxy between every agent and relay-1 (the "hostile relay below an
 * honest one"); `relayUpstreams` lists relay-1's upstreams in order, each the hub directly or a proxy in
 * front of it (two entries = "a relay with two upstreams"). Every program's stderr is kept (`logs`) so a
 * test can assert that a refusal was logged, and written as it comes to `<name>.log` in the world's
 * folder (`driftline-hostile-*` in the temp dir, with each program's data), so a failed run can be read
 * after; relay-1's `/metrics` is public for `relayMetric`.
 */

export interface WorldOptions {
  /** One agent per site (`ship-1`/`a1`, …). */
  sites?: string[];
  /**
   * The sites relay-1's peer token acts for at the hub (`hub peer add relay-1 --sites …`); default `sites`.
   * Fewer than `sites`: the hub refuses the others' bundles until `hub peer sites` (decision 240).
   */
  hubPeerSites?: string[];
  /** relay-1's own `sites` (relay.yaml); default `sites`. It learns the rest from the hub. */
  relaySites?: string[];
  agentsVia?: 'proxy' | 'relay';
  relayUpstreams?: Array<'hub' | 'proxy'>;
  /** relay-1's `forward` settings merged over the short test defaults (idleMs 300, pullIntervalMs 500, …). */
  relayForward?: Record<string, unknown>;
  /**
   * Agent `sync` settings merged over short test defaults (intervalS 1, resendAfterS 4, and `wire: 1`: the
   * proxy's attacks in attacks.ts rewrite v1's exchanges; the wire2 files say `wire: 2`).
   */
  agentSync?: Record<string, unknown>;
  /** A site's own agent `sync` settings over `agentSync` (e.g. one site on hop v1, the other on v2). */
  siteSync?: Record<string, Record<string, unknown>>;
  /**
   * The `network` component's environments (default `['prod']`, planned in `infra/network`); when given,
   * each is planned in its own folder, `infra/network/<environment>`.
   */
  environments?: string[];
  /** Each agent's `publications` block (e.g. `{ accept: { file: { dir: './files' } } }`); default none. */
  agentPublications?: Record<string, unknown>;
  /**
   * Enrol relay-1's key at the hub (`relay key`, then `hub peer rotate relay-1 --key …`), so the hub
   * checks the signed timing chain of what relay-1 forwards (docs/decisions/290-signed-hop-chain.md).
   */
  relayKey?: boolean;
  /**
   * The deterministic world only (virtualWorld.ts): each agent's link to its first upstream (relay-1 or
   * the agent-side proxy), its request bodies carried as they go (`WorldLink.streamsBodies`), instead of
   * the LAN's; a slow one keeps a detail upload open at relay-1 while its bytes come.
   */
  agentLink?: LinkSettingsInput;
  /**
   * The deterministic world only: a relay of this name between the agents and relay-1 (a ship's LAN relay:
   * agents → it → relay-1 → hub), on relay-1's `forward` settings, its token at relay-1 acting for `sites`
   * (`relay token add NAME --sites …` on relay-1); the agents' tokens are its own. Default none.
   */
  innerRelay?: string;
  /** The deterministic world only: relay-1's link to the hub (default the LAN's), e.g. a ground station's. */
  relayLink?: LinkSettingsInput;
  /** relay-1's `publications` block (e.g. `{ intervalMs: 500, chunkBytes: … }`); default the relay's own. */
  relayPublications?: Record<string, unknown>;
  /** The deterministic world only: a site's own agent link over `agentLink` (carried the same way). */
  siteLinks?: Record<string, LinkSettingsInput>;
  /**
   * The deterministic world only: every agent's clock this far ahead of the world's (a machine whose clock
   * is wrong; `StartOptions.now`), ms. Timers keep the world's clock, as a machine's monotonic timers do.
   */
  agentClockOffsetMs?: number;
  /** The deterministic world only: relay-1's clock this far ahead of the world's (`RelayDeps.clock`), ms. */
  relayClockOffsetMs?: number;
  /** Attacks in force from the start, before the relay (upstream side) or the agents (agent side) run (`use` changes them later). */
  attacks?: { agentSide?: Attack; upstreamSide?: Array<Attack | null> };
}

export interface Program {
  name: string;
  /** The program's process (none for a node of the deterministic world: virtualWorld.ts). */
  child?: ChildProcess;
  stderr: string;
}

export interface World {
  dir: string;
  sites: string[];
  api: (path: string, init?: RequestInit) => Promise<Response>;
  /** The proxy between the agents and relay-1 (when `agentsVia: 'proxy'`). */
  agentSide: HostileProxy | null;
  /** relay-1's upstream proxies, in the order of `relayUpstreams` (null where the entry is 'hub'). */
  upstreamSide: Array<HostileProxy | null>;
  /** The hub's address (it listens on a port of its own choosing). */
  hubUrl: string;
  /**
   * An exchange from outside the topology: an attacker's own connection to `hubUrl` or `relayUrl` (a
   * replay). `fetch` here; the world's network in the deterministic world (virtualWorld.ts).
   */
  fetch(url: string, init?: RequestInit): Promise<Response>;
  relayUrl: string;
  relayDataDir: string;
  programs: Map<string, Program>;
  /** The sum of a relay-1 metric's samples whose labels include `labels` (0 when absent). */
  relayMetric(name: string, labels?: Record<string, string>): Promise<number>;
  /** The same for the hub's `/metrics` (read as the admin user). */
  hubMetric(name: string, labels?: Record<string, string>): Promise<number>;
  /** `edge-agent status --json` of a site's agent. */
  agentStatus(site: string): Promise<Record<string, unknown>>;
  /** Log lines (parsed JSON) of a program whose `msg` matches. */
  logLines(program: string, msg: RegExp): Array<Record<string, unknown>>;
  /**
   * Waits (bounded) until a program logged at least `n` lines whose `msg` matches, and answers them: logs
   * reach stderr asynchronously, so a line may follow the effect a test saw first.
   */
  logged(program: string, msg: RegExp, n?: number): Promise<Array<Record<string, unknown>>>;
  /**
   * The environment of a program run on this world's files (`hub peer sites … --config`, `edge-agent
   * status`): its clock moved to the world's (`skewClock.mjs`) in the deterministic world, nothing here.
   */
  programEnv(): NodeJS.ProcessEnv;
  /** Starts (again) a stopped program. */
  start(program: string): void;
  stopProgram(program: string): Promise<void>;
  stop(): Promise<void>;
}

export async function startWorld(o: WorldOptions = {}): Promise<World> {
  const sites = o.sites ?? ['ship-1'];
  const dir = mkdtempSync(join(tmpdir(), 'driftline-hostile-'));
  // Hub and relay listen on port 0 and are found from their 'listening' log lines: a port picked free
  // beforehand can be taken by a parallel test before the program binds it (a 60 s 502 in CI once).
  const hub = await setUpHub(dir, 0, { name: 'relay-1', sites: o.hubPeerSites ?? sites });
  const programs = new Map<string, Program>();
  const launch = new Map<string, () => ChildProcess>();
  const spawnKept = (name: string, bin: string, args: string[], cwd?: string, env?: NodeJS.ProcessEnv) => {
    const c = commandFor(bin);
    const child = spawn(c.cmd, [...c.args, ...args], {
      cwd,
      env: { ...process.env, LOG_LEVEL: 'info', DRIFTLINE_EXIT_WITH_PARENT: '1', ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const p: Program = { name, child, stderr: programs.get(name)?.stderr ?? '' };
    const logFile = join(dir, `${name}.log`);
    child.stderr?.on('data', (d: Buffer) => {
      p.stderr += d.toString();
      appendFileSync(logFile, d);
    });
    programs.set(name, p);
    return child;
  };
  const start = (name: string) => {
    const f = launch.get(name);
    if (!f) throw new Error(`no program '${name}' in this world`);
    f();
  };
  const logLines = (program: string, msg: RegExp) => logLinesIn(programs.get(program)?.stderr ?? '', msg);
  /** Starts a program and answers the URL its first `<what> listening` log line names (bounded). */
  const startListening = async (name: string, what: string): Promise<string> => {
    start(name);
    const url = await until(`${name} to log '${what} listening'`, async () => {
      const child = programs.get(name)?.child;
      const p = programs.get(name);
      if (p && child && (child.exitCode !== null || child.signalCode !== null))
        throw new Error(`${name} exited before listening: ${p.stderr.slice(-2000)}`);
      const line = logLines(name, new RegExp(`^${what} listening$`))[0];
      return typeof line?.url === 'string' ? line.url : false;
    });
    await waitForHttp(`${url}/v1/health`, 60_000);
    return url;
  };
  launch.set('hub', () => spawnKept('hub', BINS.hub, ['run', '--config', hub.config]));
  const hubUrl = await startListening('hub', 'hub');
  const api = hubApi(hubUrl, hub.adminToken);
  const upstreamSide: Array<HostileProxy | null> = [];
  for (const u of o.relayUpstreams ?? ['hub'])
    upstreamSide.push(u === 'proxy' ? await startHostileProxy(hubUrl) : null);
  o.attacks?.upstreamSide?.forEach((a, i) => {
    if (a) upstreamSide[i]?.use(a);
  });
  const relayDataDir = join(dir, 'relay-1');
  const relayConfig = join(dir, 'relay-1.yaml');
  const writeRelayConfig = (token: string) =>
    writeFileSync(
      relayConfig,
      stringify({
        name: 'relay-1',
        dataDir: relayDataDir,
        listen: { port: 0 },
        sites: o.relaySites ?? sites,
        metrics: { public: true },
        upstreams: upstreamSide.map((p, i) => ({
          name: p ? `up-${i}-proxy` : `up-${i}-hub`,
          url: p ? p.url : hubUrl,
          token,
        })),
        forward: {
          idleMs: 300,
          pullIntervalMs: 500,
          backoffBaseMs: 300,
          backoffMaxMs: 2000,
          ...o.relayForward,
        },
        ...(o.relayPublications ? { publications: o.relayPublications } : {}),
      }),
    );
  writeRelayConfig(hub.relayToken);
  if (o.relayKey) {
    const key = (await runProgram('relay', ['key', '--config', relayConfig])).trim();
    const rotate = ['peer', 'rotate', 'relay-1', '--key', key, '--json', '--config', hub.config];
    writeRelayConfig((JSON.parse(await runProgram('hub', rotate)) as { token: string }).token);
  }
  launch.set('relay-1', () => spawnKept('relay-1', BINS.relay, ['run', '--config', relayConfig]));
  const relayUrl = await startListening('relay-1', 'relay');
  const agentSide = o.agentsVia === 'proxy' ? await startHostileProxy(relayUrl) : null;
  if (o.attacks?.agentSide) agentSide?.use(o.attacks.agentSide);
  const agentConfigs = new Map<string, { config: string; cwd: string }>();
  for (const site of sites) {
    const token = JSON.parse(
      await runProgram('relay', ['token', 'add', site, '--sites', site, '--config', relayConfig, '--json']),
    ).token as string;
    const cwd = join(dir, site);
    makeNetworkDirs(cwd, o);
    writeFileSync(join(cwd, 'token'), token);
    writeFileSync(join(cwd, 'hub.pub'), hub.key);
    const config = join(cwd, 'agent.yaml');
    writeFileSync(
      config,
      stringify({
        site,
        agent: 'a1',
        dataDir: './data',
        hubPublicKeyFile: './hub.pub',
        upstreams: [{ url: agentSide ? agentSide.url : relayUrl, tokenFile: './token' }],
        components: [networkComponent(o)],
        sync: agentSyncOf(o, site),
        ...(o.agentPublications ? { publications: o.agentPublications } : {}),
      }),
    );
    const init = JSON.parse(await runProgram('agent', ['init', '--config', config, '--json']));
    const enroll = [
      'enroll',
      '--config',
      hub.config,
      '--site',
      site,
      '--agent',
      'a1',
      '--key',
      init.publicKey,
    ];
    await runProgram('hub', enroll);
    agentConfigs.set(site, { config, cwd });
  }

  for (const [site, a] of agentConfigs) {
    launch.set(site, () =>
      spawnKept(site, BINS.agent, ['run', '--config', a.config], a.cwd, {
        PATH: `${FAKE_TERRAFORM_DIR}:${process.env.PATH}`,
      }),
    );
  }
  const stopProgram = async (name: string) => {
    const child = programs.get(name)?.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const done = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await done;
  };
  for (const site of sites) start(site);

  return {
    dir,
    sites,
    api,
    agentSide,
    upstreamSide,
    hubUrl,
    fetch: (url, init) => fetch(url, init),
    relayUrl,
    relayDataDir,
    programs,
    async relayMetric(name, labels = {}) {
      return metricSum(await (await fetch(`${relayUrl}/metrics`)).text(), name, labels);
    },
    async hubMetric(name, labels = {}) {
      return metricSum(await (await api('/metrics')).text(), name, labels);
    },
    async agentStatus(site) {
      const a = agentConfigs.get(site);
      if (!a) throw new Error(`no site '${site}' in this world`);
      return JSON.parse(
        await runProgram('agent', ['status', '--config', a.config, '--json'], { cwd: a.cwd }),
      );
    },
    logLines,
    async logged(program, msg, n = 1) {
      return until(`${program} to log ${msg}`, async () => {
        const lines = logLines(program, msg);
        return lines.length >= n ? lines : false;
      });
    },
    programEnv: () => ({}),
    start,
    stopProgram,
    async stop() {
      for (const name of [...sites].reverse()) await stopProgram(name);
      await stopProgram('relay-1');
      await stopProgram('hub');
      await agentSide?.close();
      for (const p of upstreamSide) await p?.close();
    },
  };
}

/**
 * The agents' one component, `network`, as both worlds write it: planned at start and on request only (a
 * schedule that does not fire during a test), in `infra/network` or, with `environments`, in a folder each.
 */
export function networkComponent(o: WorldOptions): Record<string, unknown> {
  return {
    name: 'network',
    workingDir: './infra/network',
    environments: o.environments?.map((name) => ({ name, workingDir: name })) ?? ['prod'],
    schedule: '0 0 1 1 *',
  };
}

/** The component's working folders under a site's folder `cwd`. */
export function makeNetworkDirs(cwd: string, o: WorldOptions): void {
  for (const env of o.environments ?? [''])
    mkdirSync(join(cwd, 'infra', 'network', env), { recursive: true });
}

/** A site's agent `sync` block: short test defaults, `agentSync` over them, the site's own over both. */
export function agentSyncOf(o: WorldOptions, site: string): Record<string, unknown> {
  return {
    intervalS: 1,
    jitterS: 0,
    backoffBaseS: 0.5,
    backoffCapS: 2,
    resendAfterS: 4,
    wire: 1,
    ...o.agentSync,
    ...o.siteSync?.[site],
  };
}

/** The JSON log lines in `text` (a program's stderr) whose `msg` matches. */
export function logLinesIn(text: string, msg: RegExp): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      const j = JSON.parse(line) as Record<string, unknown>;
      if (typeof j.msg === 'string' && msg.test(j.msg)) out.push(j);
    } catch {
      // a line cut by the end of a read: not a log line yet
    }
  }
  return out;
}

/** The sum of the samples of metric `name` in Prometheus text whose labels include `labels`. */
export function metricSum(text: string, name: string, labels: Record<string, string>): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const l = m[2] ?? '';
    if (Object.entries(labels).every(([k, v]) => l.includes(`${k}="${v}"`))) sum += Number(m[3]);
  }
  return sum;
}

/** Every run of `site` at the hub with its detail state, once `n` runs have arrived. */
export async function runsWithDetail(w: World, site: string, n = 1) {
  return until(`${n} run(s) of ${site} at the hub`, async () => {
    const r = await w.api(`/api/cells/${site}/prod/network/runs`);
    if (!r.ok) return false;
    const runs = ((await r.json()) as { runs: Array<{ runId: string }> }).runs;
    if (runs.length < n) return false;
    const out: Array<{ runId: string; detailState: string }> = [];
    for (const run of runs) {
      const d = (await (await w.api(`/api/runs/${run.runId}`)).json()) as { detailState: string };
      out.push({ runId: run.runId, detailState: d.detailState });
    }
    return out;
  });
}

/** Waits until every run of `site` at the hub has its detail (nothing lost: docs/architecture.md#simulation). */
export async function everyDetailArrives(w: World, site: string, n = 1) {
  let last: unknown = null;
  return until(`every detail of ${site} to arrive at the hub`, async () => {
    const runs = await runsWithDetail(w, site, n);
    last = runs.map((r) => r.detailState);
    return runs.every((r) => r.detailState === 'arrived' || r.detailState === 'none') ? runs : false;
  }).catch((e: Error) => {
    // what each program said last, so a rare timeout says why (stderr is kept, LOG_LEVEL info)
    const tail = (name: string) => (w.programs.get(name)?.stderr ?? '').split('\n').slice(-25).join('\n');
    const agent = [...w.programs.keys()].find((k) => k.startsWith(site)) ?? site;
    throw new Error(
      `${e.message} (detail states ${JSON.stringify(last)})\n--- relay-1 ---\n${tail('relay-1')}\n--- ${agent} ---\n${tail(agent)}\n--- hub ---\n${tail('hub')}`,
    );
  });
}
