import type { AgentBrief, AgentRow } from '../../ports/HubStore.js';

/**
 * An agent row without what only one site's pages read (its cadence per cell, ref patterns, source
 * heads, provider builds), with the default cells its cadence declares counted per environment: what
 * `/api/fleet` and the sweeper need of every agent. Stores keep it beside the row at write time, so a
 * fleet-wide read parses a few hundred bytes per agent, not its whole cadence (docs/decisions/465-agent-briefs.md).
 */
export function agentBrief(a: AgentRow): AgentBrief {
  const { cadenceS, refs: _r, sources: _s, providers: _p, ...rest } = a;
  const declared: Record<string, number> = {};
  for (const key of Object.keys(cadenceS)) {
    const slash = key.indexOf('/');
    if (slash <= 0 || slash === key.length - 1 || key.includes('@')) continue;
    const env = key.slice(0, slash);
    declared[env] = (declared[env] ?? 0) + 1;
  }
  return { ...rest, declared };
}
