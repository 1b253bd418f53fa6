import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { loadConfig as loadAgentConfig, type RunningAgent, startAgent } from '@driftline/edge-agent';
import { createHub, type Hub, parseConfig as hubConfig } from '@driftline/hub';
import { createRelay, type Relay, parseConfig as relayConfig } from '@driftline/relay';
import pino from 'pino';
import { parse } from 'yaml';
import type { LinkSettingsInput } from '../src/core/link/settings.js';
import { seededRandom } from '../src/core/rng.js';
import { BINS, commandFor } from '../src/topology/programs.js';
import { callNode, lanLinks, startDriven } from '../src/world/drivenWorld.js';
import { InProcessTerraform } from '../src/world/InProcessTerraform.js';
import { WORLD_START } from '../src/world/World.js';
import { WorldLink } from '../src/world/WorldLink.js';
import { type WorldInit, WorldNetwork, type WorldTransport, worldUrl } from '../src/world/WorldNetwork.js';
import type { AgentLine } from './busySite.js';
import { worldClockEnv } from './worldClockEnv.js';

export const HUB = 'hub';
/** The relay's node name: the name its `relay.yaml` gives it in the process tests. */
export const RELAY = 'ground-1';

/** One site as the programs set it up (`relay token add`, `edge-agent init`, `hub enroll`). */
export interface VirtualSite {
  name: string;
  /** Its directory: the agent's `HOME`, and where its `agent.yaml` lives. */
  dir: string;
  agentConfig: string;
  /** Its link to the relay (a profile's settings, compressed as the process test had them). */
  link: LinkSettingsInput;
  /** The plan tool's environment beside `PATH` and `HOME` (the fake terraform's variables). */
  toolEnv?: Record<string, string>;
}

export interface VirtualHeadquartersOptions {
  /** `hub.yaml` as `setUpHub` wrote it, and the admin token it made. */
  hubConfig: string;
  adminToken: string;
  /** `relay.yaml` (its upstreams are the world's: relay → hub on a LAN link) and the hub's token for it. */
  relayConfig: string;
  relayToken: string;
  sites: VirtualSite[];
  seed: number;
}

/** What a program of headquarters did: its exit code and output. */
export interface ProgramResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** One exchange a site's agent sent over its link: when it left (after any wait for the link) and was answered. */
export interface GatedExchange {
  url: string;
  method: string;
  sentAt: number;
  answeredAt?: number;
}

/**
 * A site's link as the process lane's link proxy forces it (`force('down')`, `force('up')`, hang mode):
 * going down resets every exchange under way; while it is down an exchange waits (a connection accepted and
 * not read), and when it comes back the waiting ones go on over the link, its delay counted from then. The
 * world's own `WorldLink.cut()` hangs an exchange for good (its client's timeout ends it: the agent's is 30
 * minutes), which is not the proxy the process test forced.
 */
export class GatedLink implements WorldTransport {
  private down = false;
  private readonly waiting = new Set<() => void>();
  private readonly underway = new Set<AbortController>();
  /** Every exchange, in the order sent. */
  readonly exchanges: GatedExchange[] = [];
  /** The instants the link went down and came back up. */
  readonly changes: { up: boolean; at: number }[] = [];

  constructor(private readonly inner: WorldTransport) {}

  get isDown(): boolean {
    return this.down;
  }

  async request(url: string, init: WorldInit): Promise<Response> {
    while (this.down) await this.waitForUp(init.signal);
    const c = new AbortController();
    this.underway.add(c);
    const e: GatedExchange = { url, method: init.method, sentAt: Date.now() };
    this.exchanges.push(e);
    try {
      const res = await this.inner.request(url, {
        ...init,
        signal: init.signal ? AbortSignal.any([init.signal, c.signal]) : c.signal,
      });
      e.answeredAt = Date.now();
      return res;
    } finally {
      this.underway.delete(c);
    }
  }

  close(): void {
    this.inner.close();
  }

  /** Down: every exchange under way ends as a reset; new ones wait. */
  cut(): void {
    this.down = true;
    this.changes.push({ up: false, at: Date.now() });
    for (const c of [...this.underway])
      c.abort(Object.assign(new Error('socket hang up (the link went down)'), { code: 'ECONNRESET' }));
  }

  /** Up: the exchanges that waited go on now. */
  heal(): void {
    this.down = false;
    this.changes.push({ up: true, at: Date.now() });
    for (const go of [...this.waiting]) go();
    this.waiting.clear();
  }

  private waitForUp(signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      const go = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = () => {
        this.waiting.delete(go);
        reject(signal?.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.add(go);
    });
  }
}

/**
 * Headquarters and its sites in the deterministic world (docs/decisions/540-deterministic-world.md), the
 * way `virtualBusySite.ts` builds its one busy site: the files made beforehand by the programs' own
 * commands, then hub, relay and each site's agent built by their programs' factories in this process,
 * each agent's link a world link with the process test's settings (behind a {@link GatedLink}), relay → hub
 * a LAN link, on one clock that moves by itself whenever the process is idle. Headquarters' commands
 * (`hub source publish`, `hub approve`, `hub mirror publish`, `hub refs wait`) run as the programs against
 * the hub on a socket of 127.0.0.1, their clock moved to the world's (`skewClock.mjs`); while one runs the
 * world stands still. The agents' git is the program; their terraform the fake, in process.
 */
export async function startVirtualHeadquarters(o: VirtualHeadquartersOptions) {
  const { seed } = o;
  const net = new WorldNetwork(seededRandom(`${seed}:net`), lanLinks(seed));
  const gates = new Map<string, GatedLink>();
  for (const s of o.sites) {
    net.connect(
      s.name,
      RELAY,
      new WorldLink(s.name, s.link, WORLD_START, undefined, seededRandom(`${seed}:${s.name}`)),
    );
    gates.set(s.name, new GatedLink(net.transport(s.name)));
  }
  const world = startDriven(seed);

  let hub: Hub | null = null;
  let relay: Relay | null = null;
  const agents: RunningAgent[] = [];
  let server: ReturnType<typeof createServer> | null = null;
  const close = async () => {
    for (const a of agents.splice(0)) await a.stop().catch(() => undefined);
    await relay?.stop().catch(() => undefined);
    await hub?.close().catch(() => undefined);
    server?.closeAllConnections();
    await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
    await world.end();
  };
  try {
    const silent = pino({ level: 'silent' });
    const dir = dirname(o.hubConfig);
    const hubYaml = parse(readFileSync(o.hubConfig, 'utf8')) as Record<string, unknown>;
    const hc = hubConfig({ ...hubYaml, uiDir: join(dir, 'no-ui'), ingest: { mergeWorkers: 0 } }, dir, {});
    if (!hc.ok) throw new Error(`virtual headquarters hub config: ${hc.errors.join('; ')}`);
    const h = await createHub(hc.config, { logger: silent });
    hub = h;
    net.attach(HUB, (req, res) => h.hop.server.emit('request', req, res));
    h.startTimers();
    // headquarters' commands reach the hub on this machine's loopback: no link
    const s = createServer((req, res) => h.hop.server.emit('request', req, res));
    server = s;
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
    const hubUrl = `http://127.0.0.1:${(s.address() as AddressInfo).port}`;

    const rc = relayConfig(parse(readFileSync(o.relayConfig, 'utf8')));
    if (!rc.ok) throw new Error(`virtual headquarters relay config: ${rc.errors.join('; ')}`);
    const r = createRelay(
      rc.value,
      [{ name: 'hub', url: worldUrl(HUB), token: o.relayToken, plan: { windows: [] } }],
      { logger: silent, random: seededRandom(`${seed}:${RELAY}`), transport: net.transport(RELAY) },
    );
    relay = r;
    net.attach(RELAY, (req, res) => r.hop.server.emit('request', req, res));
    r.startLoops();

    // Each agent's own log (JSON lines, `time` in world ms) says when it recorded what.
    const lines = new Map<string, AgentLine[]>();
    for (const site of o.sites) {
      const mine: AgentLine[] = [];
      lines.set(site.name, mine);
      const log = pino(
        { level: 'info' },
        {
          write: (line: string) => {
            mine.push(JSON.parse(line) as AgentLine);
          },
        },
      );
      const loaded = loadAgentConfig(site.agentConfig);
      if (!loaded.ok) throw new Error(`${site.agentConfig}: ${loaded.problems.join('; ')}`);
      agents.push(
        await startAgent(loaded.config, {
          log,
          transport: gates.get(site.name) as GatedLink,
          runner: new InProcessTerraform(),
          random: {
            sync: seededRandom(`${seed}:${site.name}:sync`),
            schedule: seededRandom(`${seed}:${site.name}:schedule`),
          },
          toolEnv: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: site.dir, ...site.toolEnv },
        }),
      );
    }

    /** A call of the hub's API as the admin, at headquarters (no link). */
    const api = (path: string, init: RequestInit = {}) =>
      callNode(HUB, (req, res) => h.hop.server.emit('request', req, res), path, {
        ...init,
        headers: { ...(init.headers as Record<string, string>), authorization: `Bearer ${o.adminToken}` },
      });
    /** A call of the relay's listener from beside it (no link): its `/metrics`, say. */
    const relayCall = (path: string, token: string) =>
      callNode(RELAY, (req, res) => r.hop.server.emit('request', req, res), path, {
        headers: { authorization: `Bearer ${token}` },
      });
    /**
     * `hub <args>` as headquarters runs it (a CI job, an approver's laptop), against the hub's socket,
     * its clock the world's; the world stands still while it runs.
     */
    const hq = (args: string[]): Promise<ProgramResult> =>
      new Promise((resolve, reject) => {
        const c = commandFor(BINS.hub);
        const p = spawn(c.cmd, [...c.args, ...args], {
          env: {
            ...process.env,
            LOG_LEVEL: 'warn',
            ...worldClockEnv(world.realNow),
          },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let stdout = '';
        let stderr = '';
        p.stdout.on('data', (d: Buffer) => {
          stdout += d.toString();
        });
        p.stderr.on('data', (d: Buffer) => {
          stderr += d.toString();
        });
        p.on('error', reject);
        p.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
      });
    const linesOf = (site: string) => lines.get(site) ?? [];
    return {
      hubUrl,
      /** `--hub <url> --token-file <file>`: where headquarters' remote commands reach the hub. */
      remote: (tokenFile: string) => ['--hub', hubUrl, '--token-file', tokenFile],
      api,
      relayCall,
      hq,
      /** A site's agent log lines so far. */
      lines: linesOf,
      /** The first line of `site`'s agent with message `msg` (and matching `f`), or undefined. */
      line: (site: string, msg: string, f: (l: AgentLine) => boolean = () => true) =>
        linesOf(site).find((l) => l.msg === msg && f(l)),
      /** A site's link, to force down and up. */
      link: (site: string) => gates.get(site) as GatedLink,
      world: { time: world.time, net },
      close,
    };
  } catch (e) {
    await close();
    throw e;
  }
}

export type VirtualHeadquarters = Awaited<ReturnType<typeof startVirtualHeadquarters>>;
