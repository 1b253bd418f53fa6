import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  initAgentKey,
  loadConfig as loadAgentConfig,
  type RunningAgent,
  readAgentStatus,
  startAgent,
  statusJson,
} from '@driftline/edge-agent';
import { addUser, createHub, enrol, type Hub, parseConfig as hubConfig, sha256Hex } from '@driftline/hub';
import { createRelay, type Relay, parseConfig as relayConfig } from '@driftline/relay';
import pino from 'pino';
import { stringify } from 'yaml';
import { seededRandom } from '../../src/core/rng.js';
import { callNode, lanLinks, startDriven } from '../../src/world/drivenWorld.js';
import { HOP_BY_HOP, type HopResponse, hostileHandler } from '../../src/world/hostile/hostileHandler.js';
import { InProcessTerraform } from '../../src/world/InProcessTerraform.js';
import { WORLD_START, worldTmp } from '../../src/world/World.js';
import { WorldLink } from '../../src/world/WorldLink.js';
import { type Dispatch, WorldNetwork, worldUrl } from '../../src/world/WorldNetwork.js';
import { until } from '../support.js';
import { worldClockEnv } from '../worldClockEnv.js';
import type { HostileProxy } from './hostileProxy.js';
import {
  agentSyncOf,
  logLinesIn,
  makeNetworkDirs,
  metricSum,
  networkComponent,
  type Program,
  type World,
  type WorldOptions,
} from './world.js';

/**
 * The hostile-relay topology of `world.ts` in the deterministic world (docs/decisions/540-deterministic-world.md):
 * the same hub, relay-1, agents and hostile hops, each node built by its program's factory in this process,
 * every exchange carried by the world's network (a LAN link of 2 ms each way between any two nodes), on one
 * virtual clock that moves by itself whenever the process is idle ({@link VirtualTime.drive}). A test
 * written for `world.ts` runs unchanged: its `until` polls with ordinary timers, which are the world's, so
 * its deadlines are virtual and exact; a program's log is its node's pino lines, kept as its `stderr`.
 * What a process would have done at set-up (`hub init`, `relay token add`, `edge-agent init`, `hub enroll`)
 * is done through the same stores; `addHubUpstream`'s `hub peer` still runs as a program.
 */
const HUB = 'hub';
const RELAY = 'relay-1';
const AGENT_HOP = 'agent-hop';
const ADMIN_TOKEN = 'virtual-world-admin-token';
const RELAY_TOKEN = 'virtual-world-relay-token';

/** What only the deterministic world has beside {@link World}: its network, and a node's crash. */
export interface VirtualWorld extends World {
  net: WorldNetwork;
  /**
   * `program` (the hub, a relay, a site's agent) goes down without warning (`World.crash`): every exchange
   * under way with it ends as a reset (`WorldNetwork.down`), it stops, and `downMs` later it opens its files
   * again (started as `start` does).
   */
  crash(program: string, downMs?: number): Promise<void>;
}

export async function startVirtualWorld(o: WorldOptions = {}, seed = 1): Promise<VirtualWorld> {
  const sites = o.sites ?? ['ship-1'];
  const dir = mkdtempSync(join(worldTmp(), 'driftline-hostile-world-'));
  const net = new WorldNetwork(seededRandom(`${seed}:net`), lanLinks(seed));
  const programs = new Map<string, Program>();
  const logger = (name: string) => {
    const p: Program = programs.get(name) ?? { name, stderr: '' };
    programs.set(name, p);
    return pino(
      { level: 'info', base: { name } },
      {
        write: (line: string) => {
          p.stderr += line;
        },
      },
    );
  };
  const logLines = (program: string, msg: RegExp) => logLinesIn(programs.get(program)?.stderr ?? '', msg);
  // from here time moves whenever the process is idle: set-up's own waits are the world's too
  const world = startDriven(seed);

  // the hub, as `hub init` and `setUpHub` leave it: the admin user and relay-1's peer token
  const hubYaml = { listen: { port: 0 }, dataDir: './hub-data', sweepIntervalS: 1 };
  writeFileSync(join(dir, 'hub.yaml'), stringify(hubYaml));
  let hub: Hub | null = null;
  const startHub = async () => {
    const hc = hubConfig({ ...hubYaml, uiDir: join(dir, 'no-ui'), ingest: { mergeWorkers: 0 } }, dir, {});
    if (!hc.ok) throw new Error(`virtual world hub config: ${hc.errors.join('; ')}`);
    const h = await createHub(hc.config, { logger: logger(HUB) });
    const server = h.hop.server;
    net.attach(HUB, (req, res) => {
      server.emit('request', req, res);
    });
    h.startTimers();
    hub = h;
    return h;
  };
  const h = await startHub();
  const peerSites = o.hubPeerSites ?? sites;
  await h.store.commit({ peers: [{ tokenSha256: sha256Hex(RELAY_TOKEN), name: RELAY, sites: peerSites }] });
  const admin = await addUser(
    h.store,
    { name: 'test-admin', roles: ['admin'], tokenSha256: sha256Hex(ADMIN_TOKEN) },
    Date.now(),
  );
  if (!admin.ok) throw new Error(`virtual world admin: ${admin.error}`);
  const hubDispatch: Dispatch = (req, res) => hub?.hop.server.emit('request', req, res);
  const api = (path: string, init: RequestInit = {}) =>
    callNode(HUB, hubDispatch, path, {
      ...init,
      headers: { ...(init.headers as Record<string, string>), authorization: `Bearer ${ADMIN_TOKEN}` },
    });

  // hostile hops: a node of the world that forwards through its own links
  const hop = (name: string, target: string): HostileProxy => {
    const transport = net.transport(name);
    const handler = hostileHandler(async (req): Promise<HopResponse> => {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers))
        if (v !== undefined && !k.startsWith(':') && !HOP_BY_HOP.has(k))
          headers[k] = Array.isArray(v) ? v.join(', ') : v;
      const r = await transport.request(`${worldUrl(target)}${req.path}`, {
        method: req.method,
        headers,
        ...(req.body.length > 0 ? { body: new Uint8Array(req.body) } : {}),
      });
      const out: Record<string, string> = {};
      r.headers.forEach((v, k) => {
        out[k] = v;
      });
      return { status: r.status, headers: out, body: Buffer.from(await r.arrayBuffer()) };
    });
    net.attach(name, handler.handle);
    return {
      url: worldUrl(name),
      port: 0,
      use: handler.use,
      seen: handler.seen,
      h2cRequests: handler.h2cRequests,
      close: async () => net.detach(name),
    };
  };
  const upstreamSide: Array<HostileProxy | null> = (o.relayUpstreams ?? ['hub']).map((u, i) =>
    u === 'proxy' ? hop(`up-${i}-proxy`, HUB) : null,
  );
  o.attacks?.upstreamSide?.forEach((a, i) => {
    if (a) upstreamSide[i]?.use(a);
  });

  if (o.relayLink)
    net.connect(
      RELAY,
      HUB,
      new WorldLink(
        `${RELAY}>${HUB}`,
        o.relayLink,
        WORLD_START,
        undefined,
        seededRandom(`${seed}:${RELAY}>${HUB}`),
      ),
    );
  const relayDataDir = join(dir, RELAY);
  const relayCfg = {
    name: RELAY,
    dataDir: relayDataDir,
    listen: { port: 0 },
    sites: o.relaySites ?? sites,
    metrics: { public: true },
    forward: { idleMs: 300, pullIntervalMs: 500, backoffBaseMs: 300, backoffMaxMs: 2000, ...o.relayForward },
    ...(o.relayPublications ? { publications: o.relayPublications } : {}),
  };
  const upstreams = upstreamSide.map((p, i) => ({
    name: p ? `up-${i}-proxy` : `up-${i}-hub`,
    url: p ? p.url : worldUrl(HUB),
    token: RELAY_TOKEN,
    plan: { windows: [] },
  }));
  // as `world.ts` writes it, so the relay's own CLI (`relay token revoke`) works on relay-1's store
  writeFileSync(
    join(dir, `${RELAY}.yaml`),
    stringify({ ...relayCfg, upstreams: upstreams.map(({ plan: _, ...u }) => u) }),
  );
  let relay: Relay | null = null;
  const startRelay = () => {
    const rc = relayConfig(relayCfg);
    if (!rc.ok) throw new Error(`virtual world relay config: ${rc.errors.join('; ')}`);
    const r = createRelay(rc.value, upstreams, {
      logger: logger(RELAY),
      random: seededRandom(`${seed}:${RELAY}`),
      transport: net.transport(RELAY),
      ...(o.relayClockOffsetMs ? { clock: { now: () => Date.now() + (o.relayClockOffsetMs ?? 0) } } : {}),
    });
    net.attach(RELAY, (req, res) => {
      r.hop.server.emit('request', req, res);
    });
    r.startLoops();
    relay = r;
    return r;
  };
  const rl = startRelay();
  // relay-1 enrolled with its key (`relay key`, then `hub peer rotate relay-1 --key …`): the hub checks the
  // signed timing chain of what it forwards (docs/decisions/290-signed-hop-chain.md)
  if (o.relayKey)
    await h.store.commit({
      peers: [
        { tokenSha256: sha256Hex(RELAY_TOKEN), name: RELAY, sites: peerSites, publicKey: rl.publicKey },
      ],
    });
  const relayDispatch: Dispatch = (req, res) => relay?.hop.server.emit('request', req, res);
  // a relay between the agents and relay-1 (`innerRelay`), relay-1's token for it acting for the sites
  const inner = o.innerRelay;
  let innerRelay: Relay | null = null;
  const innerUpstreams = inner
    ? [
        {
          name: `${inner}-up`,
          url: worldUrl(RELAY),
          token: rl.tokens.add(inner, sites),
          plan: { windows: [] },
        },
      ]
    : [];
  const startInner = (name: string) => {
    const rc = relayConfig({ ...relayCfg, name, dataDir: join(dir, name), sites });
    if (!rc.ok) throw new Error(`virtual world relay config: ${rc.errors.join('; ')}`);
    const r = createRelay(rc.value, innerUpstreams, {
      logger: logger(name),
      random: seededRandom(`${seed}:${name}`),
      transport: net.transport(name),
    });
    net.attach(name, (req, res) => {
      r.hop.server.emit('request', req, res);
    });
    r.startLoops();
    innerRelay = r;
    return r;
  };
  const firstRelay = inner ? startInner(inner) : rl;
  const firstHop = inner ?? RELAY;
  const agentSide = o.agentsVia === 'proxy' ? hop(AGENT_HOP, firstHop) : null;
  if (o.attacks?.agentSide) agentSide?.use(o.attacks.agentSide);

  for (const site of sites) {
    const settings = o.siteLinks?.[site] ?? o.agentLink;
    if (!settings) continue;
    const to = agentSide ? AGENT_HOP : firstHop;
    const link = new WorldLink(
      `${site}>${to}`,
      settings,
      WORLD_START,
      undefined,
      seededRandom(`${seed}:${site}>${to}`),
    );
    link.streamsBodies = true;
    net.connect(site, to, link);
  }

  const agentConfigs = new Map<string, { config: string; cwd: string }>();
  const agents = new Map<string, RunningAgent>();
  for (const site of sites) {
    const cwd = join(dir, site);
    makeNetworkDirs(cwd, o);
    writeFileSync(join(cwd, 'token'), firstRelay.tokens.add(site, [site]));
    writeFileSync(join(cwd, 'hub.pub'), `${h.publicKeyText}\n`);
    const config = join(cwd, 'agent.yaml');
    writeFileSync(
      config,
      stringify({
        site,
        agent: 'a1',
        dataDir: './data',
        hubPublicKeyFile: './hub.pub',
        upstreams: [{ url: agentSide ? agentSide.url : worldUrl(firstHop), tokenFile: './token' }],
        components: [networkComponent(o)],
        sync: agentSyncOf(o, site),
        ...(o.agentPublications ? { publications: o.agentPublications } : {}),
      }),
    );
    const { publicKey } = await initAgentKey(join(cwd, 'data'));
    const e = await enrol(h.store, { site, agent: 'a1', key: publicKey }, Date.now());
    if (!e.ok) throw new Error(`virtual world enrol ${site}: ${e.error}`);
    agentConfigs.set(site, { config, cwd });
  }
  const configOf = (site: string) => {
    const a = agentConfigs.get(site);
    if (!a) throw new Error(`no site '${site}' in this world`);
    const loaded = loadAgentConfig(a.config);
    if (!loaded.ok) throw new Error(`${a.config}: ${loaded.problems.join('; ')}`);
    return { ...a, config: loaded.config };
  };

  let starting = Promise.resolve();
  const start = (program: string) => {
    if (program === RELAY) {
      if (!relay) startRelay();
      return;
    }
    if (inner && program === inner) {
      if (!innerRelay) startInner(inner);
      return;
    }
    if (program === HUB) {
      starting = starting.then(async () => {
        if (!hub) await startHub();
      });
      return;
    }
    const { config, cwd } = configOf(program);
    // starts run one after another: a second start of the same agent finds the first one's
    starting = starting.then(async () => {
      if (agents.has(program)) return;
      const agent = await startAgent(config, {
        log: logger(program),
        transport: net.transport(program),
        runner: new InProcessTerraform(),
        gitProbe: { describe: async () => undefined },
        random: {
          sync: seededRandom(`${seed}:${program}:sync`),
          schedule: seededRandom(`${seed}:${program}:sched`),
        },
        toolEnv: { PATH: '/usr/bin:/bin', HOME: cwd },
        ...(o.agentClockOffsetMs ? { now: () => Date.now() + (o.agentClockOffsetMs ?? 0) } : {}),
      });
      agents.set(program, agent);
    });
  };
  const stopProgram = async (program: string) => {
    await starting;
    if (program === RELAY) {
      const r = relay;
      relay = null;
      net.detach(RELAY);
      await r?.stop();
      return;
    }
    if (inner && program === inner) {
      const r = innerRelay;
      innerRelay = null;
      net.detach(inner);
      await r?.stop();
      return;
    }
    if (program === HUB) {
      const x = hub;
      hub = null;
      net.detach(HUB);
      await x?.close();
      return;
    }
    const agent = agents.get(program);
    agents.delete(program);
    await agent?.stop();
  };

  for (const site of sites) start(site);
  await starting;
  // an attacker's own connection (a replay), on a LAN link of its own
  const outsider = net.transport('outsider');

  return {
    net,
    async crash(program, downMs = 0) {
      await starting;
      net.down(program);
      await stopProgram(program);
      if (downMs > 0) await new Promise((r) => setTimeout(r, downMs));
      start(program);
      await starting;
    },
    dir,
    sites,
    api,
    agentSide,
    upstreamSide,
    hubUrl: worldUrl(HUB),
    fetch: async (url, init = {}) => {
      const headers: Record<string, string> = {};
      new Headers(init.headers).forEach((v, k) => {
        headers[k] = v;
      });
      const body = init.body;
      return outsider.request(url, {
        method: init.method ?? 'GET',
        headers,
        ...(body instanceof Uint8Array || typeof body === 'string' ? { body } : {}),
      });
    },
    relayUrl: worldUrl(RELAY),
    relayDataDir,
    programs,
    async relayMetric(name, labels = {}) {
      return metricSum(await (await callNode(RELAY, relayDispatch, '/metrics')).text(), name, labels);
    },
    async hubMetric(name, labels = {}) {
      return metricSum(await (await api('/metrics')).text(), name, labels);
    },
    async agentStatus(site) {
      return statusJson(readAgentStatus(configOf(site).config, Date.now()));
    },
    logLines,
    async logged(program, msg, n = 1) {
      return until(`${program} to log ${msg}`, async () => {
        const lines = logLines(program, msg);
        return lines.length >= n ? lines : false;
      });
    },
    // a program's clock reads the world's (its claims and audit rows are dated by it); while it runs, the
    // world stands still (its child process is work under way)
    programEnv: () => ({
      ...worldClockEnv(world.realNow),
    }),
    start,
    stopProgram,
    async stop() {
      for (const site of [...sites].reverse()) await stopProgram(site).catch(() => undefined);
      if (inner) await stopProgram(inner).catch(() => undefined);
      await stopProgram(RELAY).catch(() => undefined);
      await stopProgram(HUB).catch(() => undefined);
      await world.end().finally(() => rmSync(dir, { recursive: true, force: true }));
    },
  };
}
