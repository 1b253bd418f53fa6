import {
  type DeliveryRow,
  type PublicationRow,
  type PublicationStore,
  supersededReason,
} from '../../ports/PublicationStore.js';

const clone = <T>(v: T): T => structuredClone(v);
/** Delivery rows are keyed by publication, site and agent ('' for the site's `queued` row). */
const key = (publicationId: string, site: string, agent: string | null) =>
  `${publicationId}\u0000${site}\u0000${agent ?? ''}`;

/**
 * PublicationStore in memory (tests, and the shape of the rules without SQL): the same contract as the
 * SQLite and PostgreSQL adapters (`hub/test/publicationStoreContract.ts`).
 */
export class MemoryPublicationStore implements PublicationStore {
  private readonly publications = new Map<string, PublicationRow>();
  private readonly rows = new Map<string, DeliveryRow>();
  /** `publicationId site` → the publication that superseded it there. */
  private readonly supersededBy = new Map<string, string>();

  async publish(p: PublicationRow): Promise<Record<string, string[]>> {
    const superseded: Record<string, string[]> = {};
    for (const site of p.sites) {
      const ids = [...this.publications.values()]
        .filter(
          (o) =>
            o.name === p.name &&
            o.fileKind === p.fileKind &&
            o.publicationId !== p.publicationId &&
            (o.expiresAt ?? p.publishedAt + 1) > p.publishedAt &&
            o.sites.includes(site) &&
            !this.supersededBy.has(key(o.publicationId, site, null)),
        )
        .sort((x, y) => x.publishedAt - y.publishedAt || (x.publicationId < y.publicationId ? -1 : 1))
        .map((o) => o.publicationId);
      for (const id of ids) {
        this.supersededBy.set(key(id, site, null), p.publicationId);
        for (const [k, r] of this.rows)
          if (r.publicationId === id && r.site === site)
            this.rows.set(k, {
              ...r,
              state: 'superseded',
              reason: supersededReason(p.publicationId),
              updatedAt: p.publishedAt,
            });
      }
      if (ids.length > 0) superseded[site] = ids;
    }
    this.publications.set(p.publicationId, clone(p));
    for (const site of p.sites) {
      const k = key(p.publicationId, site, null);
      if (!this.rows.has(k))
        this.rows.set(k, {
          publicationId: p.publicationId,
          site,
          agent: null,
          state: 'queued',
          bytes: 0,
          reason: null,
          updatedAt: p.publishedAt,
        });
    }
    return superseded;
  }

  async getPublication(publicationId: string): Promise<PublicationRow | null> {
    const p = this.publications.get(publicationId);
    return p ? clone(p) : null;
  }

  async listPublications(site?: string): Promise<PublicationRow[]> {
    return [...this.publications.values()]
      .sort((x, y) => y.publishedAt - x.publishedAt || (x.publicationId < y.publicationId ? 1 : -1))
      .slice(0, 1000)
      .filter((p) => !site || p.sites.includes(site))
      .map(clone);
  }

  async report(rows: readonly DeliveryRow[]): Promise<void> {
    for (const r of rows) {
      if (!this.publications.has(r.publicationId)) continue;
      this.rows.delete(key(r.publicationId, r.site, null));
      // Once superseded for a site, an agent's later report keeps the hub's view: superseded.
      const by = this.supersededBy.get(key(r.publicationId, r.site, null));
      this.rows.set(
        key(r.publicationId, r.site, r.agent),
        clone(by ? { ...r, state: 'superseded', reason: supersededReason(by) } : r),
      );
    }
  }

  async deliveries(publicationId: string): Promise<DeliveryRow[]> {
    return [...this.rows.entries()]
      .filter(([, r]) => r.publicationId === publicationId)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, r]) => clone(r));
  }

  async close(): Promise<void> {}
}
