import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { loadConfig as loadAgentConfig, type RunningAgent, startAgent } from '@driftline/edge-agent';
import { createHub, type Hub, parseConfig as hubConfig } from '@driftline/hub';
import { createRelay, type Relay, parseConfig as relayConfig } from '@driftline/relay';
import pino from 'pino';
import { parse } from 'yaml';
import { seededRandom } from '../src/core/rng.js';
import { callNode, lanLinks, startDriven } from '../src/world/drivenWorld.js';
import { InProcessTerraform } from '../src/world/InProcessTerraform.js';
import { WORLD_START } from '../src/world/World.js';
import { WorldLink } from '../src/world/WorldLink.js';
import { WorldNetwork, worldUrl } from '../src/world/WorldNetwork.js';
import { type AgentLine, type BusySiteOptions, busySiteActions, prepareBusySite } from './busySite.js';
import { worldClockEnv } from './worldClockEnv.js';

const HUB = 'hub';
const RELAY = 'ground-1';

/**
 * The busy site of `busySite.ts` in the deterministic world (docs/decisions/540-deterministic-world.md):
 * the same files, made by the same commands, then hub, relay and agent built by their programs'
 * factories in this process, the agent's link a world link with the options' settings (delay, bandwidth),
 * relay → hub a LAN link, on one clock that moves by itself whenever the process is idle. Headquarters'
 * commands (`hub source publish`, `hub approve`) run as the programs against the hub on a socket of
 * 127.0.0.1, their clock moved to the world's (`skewClock.mjs`); while one runs the world stands still,
 * so what it does happens at one instant of the world.
 * The agent's git is the program too. The floor is the links' own: two round trips in world time.
 */
export async function startVirtualBusySite(o: BusySiteOptions, seed = 270) {
  const p = await prepareBusySite(o, {
    hubPort: 0,
    relayPort: 0,
    relayUpstream: worldUrl(HUB),
    agentUpstream: worldUrl(RELAY),
  });
  const site = 'mars-base';
  const net = new WorldNetwork(seededRandom(`${seed}:net`), lanLinks(seed));
  net.connect(
    site,
    RELAY,
    new WorldLink('site', o.link.settings ?? {}, WORLD_START, undefined, seededRandom(`${seed}:site`)),
  );
  const world = startDriven(seed);

  let hub: Hub | null = null;
  let relay: Relay | null = null;
  let agent: RunningAgent | null = null;
  let server: ReturnType<typeof createServer> | null = null;
  const close = async () => {
    await agent?.stop().catch(() => undefined);
    await relay?.stop().catch(() => undefined);
    await hub?.close().catch(() => undefined);
    server?.closeAllConnections();
    await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
    await world.end();
  };
  try {
    const silent = pino({ level: 'silent' });
    const hubYaml = parse(readFileSync(p.hub.config, 'utf8')) as Record<string, unknown>;
    const hc = hubConfig({ ...hubYaml, uiDir: join(p.dir, 'no-ui'), ingest: { mergeWorkers: 0 } }, p.dir, {});
    if (!hc.ok) throw new Error(`virtual busy site hub config: ${hc.errors.join('; ')}`);
    const h = await createHub(hc.config, { logger: silent });
    hub = h;
    net.attach(HUB, (req, res) => h.hop.server.emit('request', req, res));
    h.startTimers();
    // headquarters' commands reach the hub on this machine's loopback: no link
    const s = createServer((req, res) => h.hop.server.emit('request', req, res));
    server = s;
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
    const hubUrl = `http://127.0.0.1:${(s.address() as AddressInfo).port}`;

    const rc = relayConfig(parse(readFileSync(p.relayConfig, 'utf8')));
    if (!rc.ok) throw new Error(`virtual busy site relay config: ${rc.errors.join('; ')}`);
    const r = createRelay(
      rc.value,
      [{ name: 'hub', url: worldUrl(HUB), token: p.hub.relayToken, plan: { windows: [] } }],
      { logger: silent, random: seededRandom(`${seed}:${RELAY}`), transport: net.transport(RELAY) },
    );
    relay = r;
    net.attach(RELAY, (req, res) => r.hop.server.emit('request', req, res));
    r.startLoops();

    // The agent's own log (JSON lines, `time` in world ms) says when it recorded what.
    const lines: AgentLine[] = [];
    const log = pino(
      { level: 'info' },
      {
        write: (line: string) => {
          lines.push(JSON.parse(line) as AgentLine);
        },
      },
    );
    const loaded = loadAgentConfig(p.agentConfig);
    if (!loaded.ok) throw new Error(`${p.agentConfig}: ${loaded.problems.join('; ')}`);
    agent = await startAgent(loaded.config, {
      log,
      transport: net.transport(site),
      runner: new InProcessTerraform(),
      random: { sync: seededRandom(`${seed}:sync`), schedule: seededRandom(`${seed}:schedule`) },
      toolEnv: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: p.siteDir,
        FAKE_TERRAFORM_STATE_DIR: join(p.siteDir, 'tfstate'),
      },
    });

    const api = (path: string, init: RequestInit = {}) =>
      callNode(HUB, (req, res) => h.hop.server.emit('request', req, res), path, {
        ...init,
        headers: { ...(init.headers as Record<string, string>), authorization: `Bearer ${p.hub.adminToken}` },
      });
    /** The floor in world time: half a health round trip over the site's link, and over relay → hub. */
    const floorMs = async (): Promise<number> => {
      const half = async (from: string, to: string) => {
        const t0 = Date.now();
        const res = await net.transport(from).request(`${worldUrl(to)}/v1/health`, { method: 'GET' });
        await res.arrayBuffer();
        if (!res.ok) throw new Error(`${to}'s health answered ${res.status}`);
        return (Date.now() - t0) / 2;
      };
      return (await half(site, RELAY)) + (await half(RELAY, HUB));
    };
    // headquarters' commands read the world's clock (their claims are dated and expire by it)
    const hqEnv = () => ({
      ...worldClockEnv(world.realNow),
    });
    return {
      ...busySiteActions(p, api, hubUrl, lines, floorMs, hqEnv),
      world: { time: world.time, net },
      close,
    };
  } catch (e) {
    await close();
    throw e;
  }
}
