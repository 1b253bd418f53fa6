import { encodeBundle, MAX_REJECTED_IDS, type RejectionPayload } from '@driftline/protocol';
import type { DownlinkRow } from '../ports/HubStore.js';
import type { IdGen } from '../ports/IdGen.js';

/** One refused bundle whose header named the agent that sent it. */
export interface Refusal {
  site: string;
  agent: string;
  /** A code of protocol's `ERRORS` table. */
  code: string;
  bundleId: string;
}

/** What `Rejections` signs with and how long its rows live. */
export interface RejectionsDeps {
  ids: IdGen;
  hubPrivateKey: CryptoKey;
  /** How long relays keep an undelivered rejection. Default 7 days. */
  lifetimeS?: number;
  /** Agents whose refusals are remembered, to fold them into one rejection. Default 10,000. */
  maxAgents?: number;
  /**
   * Agents of one site that may have a rejection at once. Default 32. The agent a refused bundle names
   * is unproven (its key is unknown), so without this a peer could fill a site's downlink, and the link
   * to it, with one signed rejection per made-up agent name. Refusals past it get no rejection.
   */
  maxAgentsPerSite?: number;
  /** Called once per site and call with the refusals that got no rejection (past `maxAgentsPerSite`). */
  onDropped?: (site: string, n: number) => void;
}

interface Open {
  ids: string[];
  count: number;
  firstAt: number;
}

/** The downlink key under which a rejection replaces the previous one (slugs hold no ':' or '/'). */
export const rejectionKey = (site: string, agent: string, code: string) =>
  `rejection:${site}/${agent}:${code}`;

/**
 * Answers refused bundles with signed, coded rejections on the site's downlink (step 8 of docs/architecture.md#the-trip), so an
 * agent the hub does not know yet learns it, shows it, and resends once enrolled, instead of waiting out
 * a resend timer in silence.
 *
 * Bounded (D5): one downlink row per (site, agent, code), which the next replaces (`replaceKey`); it
 * names the latest `MAX_REJECTED_IDS` refused bundles and counts the rest. An agent that sends 10,000
 * bundles before it is enrolled leaves one row. The refusals folded into a rejection are remembered
 * for at most `maxAgents` agents (the least recently refused are forgotten first; a forgotten agent's
 * next rejection simply starts its count again).
 *
 * Who gets it: the site and agent the refused bundle's header names. For an unknown agent there is no
 * key to check the signature with, so the name is unproven; the hop layer already limited the header's
 * site to the sites of the peer that posted it. That is why a rejection carries only the code, the
 * ids and the times, never the hub's message, and nothing about which agents are enrolled beyond the
 * code itself.
 */
export class Rejections {
  private readonly open = new Map<string, Map<string, Open>>();
  /** How many agents of each site are in `open`. */
  private readonly perSite = new Map<string, number>();

  constructor(private readonly d: RejectionsDeps) {}

  /** One signed rejection row per (site, agent, code) among `refusals`, each replacing its predecessor. */
  async rows(refusals: readonly Refusal[], now: number): Promise<Omit<DownlinkRow, 'seq'>[]> {
    const touched = new Map<string, { site: string; agent: string; code: string; state: Open }>();
    const dropped = new Map<string, number>();
    for (const r of refusals) {
      if (
        !this.open.has(`${r.site}/${r.agent}`) &&
        this.agentsOf(r.site) >= (this.d.maxAgentsPerSite ?? 32)
      ) {
        dropped.set(r.site, (dropped.get(r.site) ?? 0) + 1);
        continue;
      }
      const state = this.fold(r, now);
      touched.set(rejectionKey(r.site, r.agent, r.code), { ...r, state });
    }
    for (const [site, n] of dropped) this.d.onDropped?.(site, n);
    const lifetimeS = this.d.lifetimeS ?? 7 * 86_400;
    return Promise.all(
      [...touched].map(async ([key, { site, agent, code, state }]) => ({
        site,
        agent,
        kind: 'control' as const,
        docId: null,
        requestId: null,
        replaceKey: key,
        expiresAt: now + lifetimeS * 1000,
        bytes: await this.sign({ site, agent, code, state }, now, lifetimeS),
      })),
    );
  }

  /** The agent's bundles were accepted: forget its refusals, so a later rejection starts afresh. */
  accepted(site: string, agent: string): void {
    if (this.open.delete(`${site}/${agent}`)) this.perSite.set(site, this.agentsOf(site) - 1);
  }

  private agentsOf(site: string): number {
    return this.perSite.get(site) ?? 0;
  }

  private fold(r: Refusal, now: number): Open {
    const who = `${r.site}/${r.agent}`;
    const known = this.open.get(who);
    const codes = known ?? new Map<string, Open>();
    if (!known) this.perSite.set(r.site, this.agentsOf(r.site) + 1);
    // Re-inserted on every refusal: the map's order is then least recently refused first.
    this.open.delete(who);
    this.open.set(who, codes);
    for (const oldest of this.open.keys()) {
      if (this.open.size <= (this.d.maxAgents ?? 10_000)) break;
      this.open.delete(oldest);
      const site = oldest.slice(0, oldest.indexOf('/'));
      this.perSite.set(site, this.agentsOf(site) - 1);
    }
    const state = codes.get(r.code) ?? { ids: [], count: 0, firstAt: now };
    if (!state.ids.includes(r.bundleId)) {
      state.ids.push(r.bundleId);
      if (state.ids.length > MAX_REJECTED_IDS) state.ids.splice(0, state.ids.length - MAX_REJECTED_IDS);
    }
    state.count++;
    codes.set(r.code, state);
    return state;
  }

  private sign(
    r: { site: string; agent: string; code: string; state: Open },
    now: number,
    lifetimeS: number,
  ): Promise<Uint8Array> {
    const payload: RejectionPayload = {
      type: 'rejection',
      site: r.site as RejectionPayload['site'],
      agent: r.agent as RejectionPayload['agent'],
      code: r.code,
      bundleIds: [...r.state.ids] as RejectionPayload['bundleIds'],
      count: r.state.count,
      firstAt: r.state.firstAt,
      lastAt: now,
    };
    return encodeBundle(
      {
        id: this.d.ids.next(),
        kind: 'control',
        source: 'hub',
        destination: { site: payload.site, agent: payload.agent },
        created: now,
        lifetimeS,
        priority: 'control',
      },
      payload,
      this.d.hubPrivateKey,
    );
  }
}
