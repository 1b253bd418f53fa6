import { READS_INLINE_PUBLICATIONS } from '@driftline/protocol';
import { cadences } from '../adapters/cron/cronCells.js';
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
    reads: [READS_INLINE_PUBLICATIONS],
    ...(repos.length > 0 ? { refs: refFacts(config) } : {}),
  };
  return { facts, repos };
}

/** The provider builds the site's mirrors hold (`registry/namespace/type/version/platform`), at most 5000. */
export async function providerBuilds(mirrors: readonly string[]): Promise<string[]> {
  const scanned = await scanMirror([...mirrors], { maxEntries: 20_000 });
  return scanned.builds.map((b) => b.build).slice(0, 5000);
}
