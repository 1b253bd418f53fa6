import { asAgentId, asSiteId, encodeBundle } from '@driftline/protocol';
import type { Clock } from '../../ports/Clock.js';
import type { AgentBrief, ReadStore, StoreWrites } from '../../ports/HubStore.js';
import type { IdGen } from '../../ports/IdGen.js';

/** How long a `contact-windows` control lives on the downlink: a week, a site that long away gets the next. */
const LIFETIME_MS = 7 * 86_400_000;
/** Least wait before the same windows go down again to an agent that has not confirmed them. */
const MIN_RESEND_MS = 15 * 60_000;

/** One agent sent the hub's windows for its site. */
export interface WindowsSent {
  site: string;
  agent: string;
  windows: string[];
  /** Sent before to this agent, not yet confirmed. */
  again: boolean;
}

const sameSet = (a: readonly string[], b: readonly string[]) => {
  const sa = new Set(a);
  const sb = new Set(b);
  return sa.size === sb.size && [...sa].every((w) => sb.has(w));
};

/**
 * Windows declared once (docs/decisions/590-windows-declared-once.md): the windows the hub's config
 * declares for a site (`contactPlans.sites`) go down, signed, to each live agent of the site that reads
 * them (`reads: hub-windows`) until its `hubWindows` fact names the same ones; an agent holding windows
 * the config no longer declares gets the empty list. Sent again, replacing an undelivered copy, every
 * three of the agent's contact intervals (at least 15 minutes) while unconfirmed. Run each sweep.
 */
export class HubWindows {
  /** When each agent (`site/agent`) was last sent which windows (this process; a restart sends once more). */
  private readonly lastSent = new Map<string, { key: string; at: number }>();

  constructor(
    private readonly d: {
      store: Pick<ReadStore, 'listAgentBriefs'> & StoreWrites;
      clock: Clock;
      ids: IdGen;
      hubPrivateKey: CryptoKey;
      /** `contactPlans.sites` of hub.yaml. */
      sites: Readonly<Record<string, readonly string[]>>;
    },
  ) {}

  /** Sends what is due now; answers what went down. */
  async sendDue(): Promise<WindowsSent[]> {
    const { store, clock, sites } = this.d;
    const now = clock.now();
    const due: { agent: AgentBrief; windows: string[]; again: boolean }[] = [];
    const seen = new Set<string>();
    for (const a of await store.listAgentBriefs()) {
      if (a.revokedAt !== null || a.readsHubWindows !== true) continue;
      const id = `${a.site}/${a.agent}`;
      seen.add(id);
      const windows = [...(sites[a.site] ?? [])];
      if (sameSet(windows, a.hubWindows ?? [])) {
        this.lastSent.delete(id);
        continue;
      }
      const key = windows.join('\n');
      const last = this.lastSent.get(id);
      const every = Math.max(MIN_RESEND_MS, 3 * (a.contactIntervalS ?? 3600) * 1000);
      if (last && last.key === key && now - last.at < every) continue;
      due.push({ agent: a, windows, again: last?.key === key });
      this.lastSent.set(id, { key, at: now });
    }
    for (const id of this.lastSent.keys()) if (!seen.has(id)) this.lastSent.delete(id);
    if (due.length === 0) return [];
    const downlink = await Promise.all(due.map((x) => this.row(x.agent, x.windows, now)));
    await store.commit({ downlink });
    return due.map((x) => ({ site: x.agent.site, agent: x.agent.agent, windows: x.windows, again: x.again }));
  }

  private async row(a: AgentBrief, windows: string[], now: number) {
    const bytes = await encodeBundle(
      {
        id: this.d.ids.next(),
        kind: 'control',
        source: 'hub',
        destination: { site: asSiteId(a.site), agent: asAgentId(a.agent) },
        created: now,
        lifetimeS: LIFETIME_MS / 1000,
        priority: 'control',
      },
      {
        type: 'contact-windows',
        site: asSiteId(a.site),
        agent: asAgentId(a.agent),
        windows,
        declaredAt: now,
      },
      this.d.hubPrivateKey,
    );
    return {
      site: a.site,
      agent: a.agent,
      kind: 'control' as const,
      docId: null,
      requestId: null,
      // one undelivered copy per agent: the newest declaration replaces it
      replaceKey: `contact-windows:${a.site}/${a.agent}`,
      bytes,
      expiresAt: now + LIFETIME_MS,
    };
  }
}
