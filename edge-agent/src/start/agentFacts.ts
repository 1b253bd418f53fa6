import {
  READS_HUB_WINDOWS,
  READS_INLINE_PUBLICATIONS,
  READS_WIRE2_GIT_HEADS,
  READS_WIRE2_PUBLICATIONS,
  wire2,
} from '@driftline/protocol';
import { cadences } from '../adapters/cron/cronCells.js';
import type { Wire2State } from '../adapters/http/wire2State.js';
import { scanMirror } from '../adapters/providers/mirror.js';
import type { AgentConfig } from '../config.js';
import type { CycleFacts } from '../core/cycle/PlanCycle.js';
import { refFacts } from '../core/plan/refPolicy.js';

/**
 * The facts the agent publishes from its config (version, cadences, contact interval and windows, first
 * upstream, platform, the refs it plans) and the repositories its components plan from.
 */
export function agentFacts(
  config: AgentConfig,
  version: string,
  platform: string,
): { facts: CycleFacts; repos: string[] } {
  const cadenceS = cadences(config);
  // Without a declared interval, the hub expects contact within two of the shortest cadence (with its
  // jitter) and one sync interval.
  const contactIntervalS =
    config.sync.contactIntervalS ??
    2 * (Math.min(...Object.values(cadenceS)) + config.sync.jitterS) + config.sync.intervalS;
  const repos = [...new Set(config.components.flatMap((c) => (c.source ? [c.source.repo] : [])))];
  const facts: CycleFacts = {
    version,
    cadenceS,
    contactIntervalS,
    contactWindows: config.sync.contactWindows,
    upstream: config.upstreams[0]?.url,
    platform,
    // what this version reads that an older one refuses, so the hub sends it (decision 360)
    reads: agentReads(null, []),
    ...(repos.length > 0 ? { refs: refFacts(config) } : {}),
  };
  return { facts, repos };
}

/**
 * What the agent reads that an older one refuses (its `reads` fact): inline manifests and the hub's
 * declared contact windows always (decisions 360, 590); the hub's compact publication manifests (decision 505), and a git bundle's heads packed in them
 * (decision 520), each while every upstream last said, on this agent's v2 registration, that it carries
 * them down.
 */
export function agentReads(state: Wire2State | null, urls: readonly string[]): string[] {
  // the hub's declared windows travel as a v1 control bundle, which every relay carries (decision 590)
  const always = [READS_INLINE_PUBLICATIONS, READS_HUB_WINDOWS];
  if (!state?.everyLinkCarries(urls, wire2.CARRIES_PUBLICATIONS)) return always;
  return state.everyLinkCarries(urls, wire2.CARRIES_GIT_HEADS)
    ? [...always, READS_WIRE2_PUBLICATIONS, READS_WIRE2_GIT_HEADS]
    : [...always, READS_WIRE2_PUBLICATIONS];
}

/**
 * Keeps the facts' `reads` current as upstreams register this agent (decision 505), from the state the
 * last run left; `changed` runs after each change (the ledger writes the facts, the loop pushes them).
 */
export function followReads(
  facts: CycleFacts,
  state: Wire2State | null,
  urls: readonly string[],
  changed: () => void,
): void {
  facts.reads = agentReads(state, urls);
  if (!state) return;
  state.onLinks = () => {
    const next = agentReads(state, urls);
    if (next.join() === facts.reads?.join()) return;
    facts.reads = next;
    changed();
  };
}

/** The provider builds the site's mirrors hold (`registry/namespace/type/version/platform`), at most 5000. */
export async function providerBuilds(mirrors: readonly string[]): Promise<string[]> {
  const scanned = await scanMirror([...mirrors], { maxEntries: 20_000 });
  return scanned.builds.map((b) => b.build).slice(0, 5000);
}
