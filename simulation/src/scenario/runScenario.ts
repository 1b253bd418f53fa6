import { join } from 'node:path';
import { seededRandom } from '../core/rng.js';
import { resolveSettings } from '../link.js';
import type { TopologySpec } from '../topology/spec.js';
import { Topology } from '../topology/Topology.js';
import { deliveredAtHub, HubRefused, percentile, producedFromLog } from './collect.js';
import type { Scenario } from './scenarios.js';

/** The scenario report; these field names are read by the team's checks: keep them as they are. */
export interface ScenarioReport {
  scenario: string;
  profile: string;
  timeScale: number;
  durationS: number;
  produced: number;
  delivered: number;
  lost: number;
  duplicated: number;
  /** Delivery latency: recorded at the agent until received at the hub, ms. */
  latency: { p50: number; p95: number; max: number };
  oneWayDelayMs: number;
  /** Time from healing the links until everything produced was at the hub, ms. */
  convergenceMs: number;
  /** Bytes on each link per direction (`up` toward the hub). */
  links: Record<string, { up: number; down: number }>;
  kills: Array<{ node: string; atMs: number; pauseMs: number }>;
  lostRunIds: string[];
}

export interface RunOptions {
  scenario: Scenario;
  durationS: number;
  dir: string;
  /** Bound on the wait for delivery after healing. */
  settleTimeoutS?: number;
  sites?: number;
  seed?: number;
  /**
   * Go on producing (chaos included) past `durationS` until the agents logged this many results, for at
   * most three times `durationS` more: on a slow machine, agents killed every few seconds may otherwise
   * produce nothing to check.
   */
  minProduced?: number;
  log?: (line: string) => void;
}

export function scenarioSpec(o: RunOptions): TopologySpec {
  const names = ['ship-7', 'polar-1', 'mars-base', 'rig-4', 'camp-2'];
  return {
    dir: o.dir,
    sites: names.slice(0, o.sites ?? 3).map((site) => ({
      site,
      agent: 'a1',
      profile: o.scenario.profile,
      timeScale: o.scenario.timeScale,
      components: [{ name: 'network', environments: ['prod', 'staging'], schedule: '*/3 * * * * *' }],
    })),
    relayLink: { profile: 'lan', timeScale: 1 },
    agentSyncIntervalS: 1,
    fastPlans: true,
    hubApiPerMinute: 10_000,
    seed: o.seed ?? 7,
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function runScenario(o: RunOptions): Promise<ScenarioReport> {
  const log = o.log ?? (() => {});
  const spec = scenarioSpec(o);
  const oneWay = resolveSettings({ profile: o.scenario.profile, timeScale: o.scenario.timeScale });
  const oneWayDelayMs = oneWay.ok ? oneWay.oneWayDelayMs : 0;
  const topo = await Topology.start(spec, log);
  const kills: ScenarioReport['kills'] = [];
  const started = Date.now();
  try {
    log(`producing results for ${o.durationS} s on '${o.scenario.profile}' ×${o.scenario.timeScale}`);
    const rng = seededRandom(o.seed ?? 7);
    const until = started + o.durationS * 1000;
    const producedNow = () =>
      spec.sites.flatMap((s) => producedFromLog(join(topo.layout.logs, `agent-${s.site}.log`)));
    const longest = until + 3 * o.durationS * 1000;
    const more = () =>
      o.minProduced !== undefined && Date.now() < longest && producedNow().length < o.minProduced;
    while (Date.now() < until || more()) {
      if (!o.scenario.chaos) {
        await sleep(Math.max(100, Math.min(1000, until - Date.now())));
        continue;
      }
      await sleep(2000 + rng() * 4000);
      if (Date.now() >= until && !more()) break;
      const node = topo.nodes[Math.floor(rng() * topo.nodes.length)] as Parameters<Topology['startNode']>[0];
      const pauseMs = Math.round(500 + rng() * 3000);
      kills.push({ node, atMs: Date.now() - started, pauseMs });
      log(`chaos: SIGKILL ${node}, back in ${pauseMs} ms`);
      await topo.stopNode(node, 'SIGKILL');
      await sleep(pauseMs);
      topo.startNode(node);
    }
    // What was produced until now is what must arrive; later results do not move the goal.
    const produced = producedNow();
    log(`produced ${produced.length} results; healing the links and waiting for delivery`);
    const healedAt = Date.now();
    for (const l of topo.links.values()) l.control.force('up');
    const cells = spec.sites.flatMap((s) =>
      s.components.flatMap((c) =>
        c.environments.map((environment) => ({ site: s.site, environment, component: c.name })),
      ),
    );
    const deadline = healedAt + (o.settleTimeoutS ?? Math.max(120, (20 * oneWayDelayMs) / 1000)) * 1000;
    // A hub restarting (chaos) answers nothing for a moment: keep the last count. A refused token is a bug.
    const keep =
      <T>(last: T) =>
      (e: unknown) => {
        if (e instanceof HubRefused) throw e;
        return last;
      };
    let hub = await deliveredAtHub(topo.hubUrl, cells, topo.adminToken).catch(
      keep({ received: new Map<string, number>(), repeats: 0 }),
    );
    let convergenceMs = -1;
    while (Date.now() < deadline) {
      if (produced.every((p) => hub.received.has(p.runId))) {
        convergenceMs = Date.now() - healedAt;
        break;
      }
      await sleep(1000);
      hub = await deliveredAtHub(topo.hubUrl, cells, topo.adminToken).catch(keep(hub));
    }
    const latencies = produced
      .filter((p) => hub.received.has(p.runId))
      .map((p) => Math.max(0, (hub.received.get(p.runId) as number) - p.at))
      .sort((a, b) => a - b);
    const lost = produced.filter((p) => !hub.received.has(p.runId));
    const links: ScenarioReport['links'] = {};
    for (const [name, l] of topo.links) {
      const s = l.stats();
      links[name] = { up: s.uplink.bytes, down: s.downlink.bytes };
    }
    return {
      scenario: o.scenario.name,
      profile: o.scenario.profile,
      timeScale: o.scenario.timeScale,
      durationS: o.durationS,
      produced: produced.length,
      delivered: produced.length - lost.length,
      lost: lost.length,
      duplicated: hub.repeats,
      latency: { p50: percentile(latencies, 50), p95: percentile(latencies, 95), max: latencies.at(-1) ?? 0 },
      oneWayDelayMs,
      convergenceMs,
      links,
      kills,
      lostRunIds: lost.map((p) => p.runId),
    };
  } finally {
    await topo.stop();
  }
}
