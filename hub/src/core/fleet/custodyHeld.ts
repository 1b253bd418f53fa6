import type { AttentionCustody } from '@driftline/protocol';
import type { AgentFacts } from '../../ports/HubStore.js';

/**
 * The relay an agent's upstream is, where the hub can tell: the hub knows its relays by name, not by URL,
 * so an upstream whose host is a relay's name (`http://relay-2:7000`, `https://relay-2.example.net`), or
 * which the agent names so, is that relay; any other stays as the agent names it.
 */
export function relayOfUpstream(upstream: string, relays: ReadonlySet<string>): string | null {
  if (relays.has(upstream)) return upstream;
  let host: string;
  try {
    host = new URL(upstream).hostname.toLowerCase();
  } catch {
    return null;
  }
  const label = host.split('.')[0] ?? host;
  for (const r of relays) {
    const name = r.toLowerCase();
    if (name === host || name === label) return r;
  }
  return null;
}

/**
 * What the fleet's enrolled agents last reported of upstreams sitting on their custody (their
 * `custodyOverdue` fact, kept on the agent row and its brief: docs/decisions/575-custody-deadline-per-path.md
 * and 465-agent-briefs.md), one entry per agent and upstream, the upstream named as a relay where it is
 * one. Reads nothing: the briefs a fleet read already holds.
 */
export function custodyHeld(agents: Iterable<AgentFacts>, relayNames: Iterable<string>): AttentionCustody[] {
  const relays = new Set(relayNames);
  const out: AttentionCustody[] = [];
  for (const a of agents) {
    if (a.revokedAt !== null || !a.custodyOverdue?.length) continue;
    for (const c of a.custodyOverdue) {
      const relay = relayOfUpstream(c.upstream, relays);
      out.push({
        upstream: relay ?? c.upstream,
        relay,
        site: a.site,
        agent: a.agent,
        results: c.results,
        oldestAt: c.oldestAt,
      });
    }
  }
  return out;
}
