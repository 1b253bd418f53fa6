import type { Clock } from '../../ports/Clock.js';
import type { AgentRow, ReadStore, StoreWrites } from '../../ports/HubStore.js';
import type { IdGen } from '../../ports/IdGen.js';
import {
  type DeliveryRow,
  type PublicationRow,
  type PublicationStore,
  supersededReason,
} from '../../ports/PublicationStore.js';
import { confirmBy } from '../confirmBy.js';
import { buildManifests, siteReads } from './manifests.js';

/** Publications looked at per sweep, newest first (older ones are long delivered or expired). */
export const MAX_RESEND_PUBLICATIONS = 200;

/** A site whose agent has not reported a publication by its `confirmBy`. */
export interface UnconfirmedDelivery {
  publication: PublicationRow;
  site: string;
  confirmBy: number;
}

/**
 * Publications a site's agent has not confirmed (decision 300): the site's delivery row is still the
 * hub's `queued` one (no agent reported the publication in its document's `bundles` map) past
 * `confirmBy`, N contact windows after it was published, for a site whose agent confirms what it
 * receives. Such a manifest goes on the site's downlink again (a new bundle, the same signed manifest
 * with the same supersedes list: the agent acts on a publication id once) once per span it had.
 */
export class PublicationResends {
  /** When each (publication, site) was last sent again (this process; a restart sends each once more). */
  private readonly lastSent = new Map<string, number>();

  constructor(
    private readonly d: {
      store: StoreWrites & Pick<ReadStore, 'listAgents'>;
      publications: Pick<PublicationStore, 'listPublications' | 'deliveries'>;
      clock: Clock;
      ids: IdGen;
      hubPrivateKey: CryptoKey;
      /** Contact interval assumed for an agent that declares none, seconds. */
      defaultContactIntervalS?: number | null;
    },
  ) {}

  /** The unconfirmed deliveries now, with every publication's delivery rows and each site's agents read once. */
  async unconfirmed(): Promise<{
    list: UnconfirmedDelivery[];
    rows: Map<string, DeliveryRow[]>;
    agentsOf: Map<string, AgentRow[]>;
  }> {
    const now = this.d.clock.now();
    const publications = (await this.d.publications.listPublications()).slice(0, MAX_RESEND_PUBLICATIONS);
    const rows = new Map<string, DeliveryRow[]>();
    const agentsOf = new Map<string, AgentRow[]>();
    const list: UnconfirmedDelivery[] = [];
    for (const p of publications) {
      const ds = await this.d.publications.deliveries(p.publicationId);
      rows.set(p.publicationId, ds);
      if (p.expiresAt !== null && p.expiresAt <= now) continue;
      for (const row of ds) {
        if (row.agent !== null || row.state !== 'queued') continue;
        let agents = agentsOf.get(row.site);
        if (!agents) {
          agents = await this.d.store.listAgents(row.site);
          agentsOf.set(row.site, agents);
        }
        const agent = agents.find((a) => a.revokedAt === null && a.confirmsRequests === true);
        const by = confirmBy(agent, p.publishedAt, this.d.defaultContactIntervalS).confirmBy;
        if (by !== undefined && now >= by) list.push({ publication: p, site: row.site, confirmBy: by });
      }
    }
    return { list, rows, agentsOf };
  }

  /** Sends again what `unconfirmed` lists, each at most once per its span; answers what was sent. */
  async resendUnconfirmed(): Promise<UnconfirmedDelivery[]> {
    const now = this.d.clock.now();
    const { list, rows, agentsOf } = await this.unconfirmed();
    const open = new Set(list.map((u) => `${u.publication.publicationId}/${u.site}`));
    for (const k of this.lastSent.keys()) if (!open.has(k)) this.lastSent.delete(k);
    const out: UnconfirmedDelivery[] = [];
    for (const u of list) {
      const p = u.publication;
      const key = `${p.publicationId}/${u.site}`;
      const last = this.lastSent.get(key);
      if (last !== undefined && now - last < u.confirmBy - p.publishedAt) continue;
      // The same manifest as the first sending: its expiry, and the publications it supersedes there.
      const supersedes = [...rows.entries()]
        .filter(([, ds]) =>
          ds.some((r) => r.site === u.site && r.reason === supersededReason(p.publicationId)),
        )
        .map(([id]) => id);
      const { downlink } = await buildManifests(
        {
          publicationId: p.publicationId,
          name: p.name,
          fileKind: p.fileKind,
          sha256: p.sha256,
          size: p.size,
          sites: p.sites,
          now: p.publishedAt,
          ...(p.expiresAt !== null
            ? { ttlS: Math.max(1, Math.round((p.expiresAt - p.publishedAt) / 1000)) }
            : {}),
          ...(supersedes.length > 0 ? { supersedes: { [u.site]: supersedes } } : {}),
          onlySites: [u.site],
          sentAt: now,
          ...(siteReads(agentsOf.get(u.site) ?? []).get(u.site)?.wire2 ? { wire2Sites: [u.site] } : {}),
        },
        this.d.hubPrivateKey,
        () => this.d.ids.next(),
      );
      await this.d.store.commit({ downlink });
      this.lastSent.set(key, now);
      out.push(u);
    }
    return out;
  }
}
