import { nextWindowOf, parseWindows } from '@driftline/protocol';
import type { AgentRow } from '../ports/HubStore.js';

/**
 * Contact windows an agent has to confirm what the hub sent it (a plan request, an approval) before it
 * counts as `unconfirmed` and goes down again (docs/decisions/230-time-a-hop-cannot-forge.md, 300).
 */
export const CONFIRM_WINDOWS = 3;

/** How far past a window's end its contact may arrive (the agents' sync interval, backoff, light time). */
const WINDOW_GRACE_MS = 60_000;

/**
 * When the agent's word on something sent at `now` is due: by the end of the `CONFIRM_WINDOWS`th
 * contact window (decision 260) from now, plus a grace, for an agent that declares windows the hub can
 * read; else `CONFIRM_WINDOWS` contact intervals (the agent's, the hub's default, else an hour). None
 * for an agent that does not confirm what it receives (an older agent: delivery is a relay's pull).
 */
export function confirmBy(
  agent: Pick<AgentRow, 'confirmsRequests' | 'contactIntervalS' | 'contactWindows'> | undefined | null,
  now: number,
  defaultContactIntervalS?: number | null,
): { confirmBy?: number } {
  if (agent?.confirmsRequests !== true) return {};
  const specs = parseWindows(agent.contactWindows ?? []);
  if (specs.length > 0) {
    // Windows that start from now on; one open now may end before the word can come back.
    let t = now - 1;
    let end: number | null = null;
    for (let i = 0; i < CONFIRM_WINDOWS; i++) {
      const w = nextWindowOf(specs, t);
      if (!w) break;
      end = Math.max(end ?? 0, w.end);
      t = w.start;
    }
    if (end !== null) return { confirmBy: Math.max(end, now) + WINDOW_GRACE_MS };
  }
  const intervalS = agent.contactIntervalS ?? defaultContactIntervalS ?? 3600;
  return { confirmBy: now + CONFIRM_WINDOWS * Math.max(1, intervalS) * 1000 };
}

/** Whether the agent's word on something it was sent is overdue (past `confirmBy`, not confirmed). */
export const isUnconfirmed = (confirmByAt: number | null | undefined, confirmed: boolean, now: number) =>
  !confirmed && confirmByAt != null && now >= confirmByAt;
