import { parsePackedZipPath, providerBuild } from '@driftline/protocol';
import type { DeliveryRow, PublicationRow } from '../ports/PublicationStore.js';

/** What `onTheWay` reads of the publication store. */
export type PublicationReader = {
  listPublications(site?: string): Promise<PublicationRow[]>;
  deliveries(publicationId: string): Promise<DeliveryRow[]>;
};

/** Most publications of one site read to answer a gate (newest first; older ones are long delivered). */
const MAX_SITE_PUBLICATIONS = 1000;
/** Delivery states that end a publication's trip without placing it. */
const DEAD = new Set(['refused', 'expired', 'superseded']);

/** The provider build (`<address> <version> <platform>`) a provider-mirror publication carries, if any. */
function buildOf(p: PublicationRow): string | null {
  if (p.fileKind !== 'provider-mirror') return null;
  const b = parsePackedZipPath(p.name);
  return b ? providerBuild(b.address, b.version, b.platform) : null;
}

/**
 * Finds, per site, the publications on their way that answer a blocked plan's needs. A publication is on
 * its way for a plan when it is unexpired, targets the site, carries a needed build, and either was
 * published after the plan reached the hub (the site cannot have had it) or has not been placed at the
 * site, or was placed no earlier than the plan reached the hub (the agent plans again once it places a
 * publication; its re-plan is still to come). Refused, expired or superseded deliveries are not on their
 * way. Hub times only (`receivedAt`, `publishedAt`, delivery `updatedAt`), so no clock offset enters.
 */
export class OnTheWay {
  private readonly bySite = new Map<string, Promise<PublicationRow[]>>();
  /** Deliveries read once per publication for the whole gate, not once per cell and need. */
  private readonly delivered = new Map<string, Promise<DeliveryRow[]>>();

  constructor(
    private readonly publications: PublicationReader,
    private readonly now: number,
  ) {}

  private forSite(site: string): Promise<PublicationRow[]> {
    let p = this.bySite.get(site);
    if (!p) {
      p = this.publications
        .listPublications(site)
        .then((rows) =>
          rows
            .slice(0, MAX_SITE_PUBLICATIONS)
            .filter((r) => (r.expiresAt === null || r.expiresAt > this.now) && buildOf(r) !== null),
        );
      this.bySite.set(site, p);
    }
    return p;
  }

  /**
   * The ids of publications on their way that together answer every need; empty when any need has none
   * (then the cell is really blocked).
   */
  async answering(site: string, needs: readonly string[], receivedAt: number): Promise<string[]> {
    if (needs.length === 0) return [];
    const candidates = await this.forSite(site);
    const ids: string[] = [];
    for (const need of new Set(needs)) {
      let found: string | null = null;
      for (const p of candidates) {
        if (buildOf(p) !== need || !(await this.moving(p, site, receivedAt))) continue;
        found = p.publicationId;
        break;
      }
      if (!found) return [];
      if (!ids.includes(found)) ids.push(found);
    }
    return ids;
  }

  private async moving(p: PublicationRow, site: string, receivedAt: number): Promise<boolean> {
    let all = this.delivered.get(p.publicationId);
    if (!all) {
      all = this.publications.deliveries(p.publicationId);
      this.delivered.set(p.publicationId, all);
    }
    const rows = (await all).filter((d) => d.site === site);
    if (rows.some((d) => DEAD.has(d.state))) return false;
    if (p.publishedAt > receivedAt) return true;
    const placed = rows.filter((d) => d.state === 'placed');
    if (placed.length === 0) return true;
    return placed.some((d) => d.updatedAt >= receivedAt);
  }
}
