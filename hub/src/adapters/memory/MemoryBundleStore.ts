import type { BundleRow, BundleStore, DeliveryRow } from '../../ports/BundleStore.js';

const supersededReason = (by: string) => `superseded by bundle ${by} (same name and kind)`;
const clone = <T>(v: T): T => structuredClone(v);
/** Delivery rows are keyed by bundle, site and agent ('' for the site's `queued` row). */
const key = (bundleId: string, site: string, agent: string | null) =>
  `${bundleId}\u0000${site}\u0000${agent ?? ''}`;

/**
 * BundleStore in memory (tests, and the shape of the rules without SQL): the same contract as the
 * SQLite and PostgreSQL adapters (`hub/test/bundleStoreContract.ts`).
 */
export class MemoryBundleStore implements BundleStore {
  private readonly bundles = new Map<string, BundleRow>();
  private readonly rows = new Map<string, DeliveryRow>();
  /** `bundleId site` → the bundle that superseded it there. */
  private readonly supersededBy = new Map<string, string>();

  async publish(b: BundleRow): Promise<Record<string, string[]>> {
    const superseded: Record<string, string[]> = {};
    for (const site of b.sites) {
      const ids = [...this.bundles.values()]
        .filter(
          (p) =>
            p.name === b.name &&
            p.fileKind === b.fileKind &&
            p.bundleId !== b.bundleId &&
            (p.expiresAt ?? b.publishedAt + 1) > b.publishedAt &&
            p.sites.includes(site) &&
            !this.supersededBy.has(key(p.bundleId, site, null)),
        )
        .sort((x, y) => x.publishedAt - y.publishedAt || (x.bundleId < y.bundleId ? -1 : 1))
        .map((p) => p.bundleId);
      for (const id of ids) {
        this.supersededBy.set(key(id, site, null), b.bundleId);
        for (const [k, r] of this.rows)
          if (r.bundleId === id && r.site === site)
            this.rows.set(k, {
              ...r,
              state: 'superseded',
              reason: supersededReason(b.bundleId),
              updatedAt: b.publishedAt,
            });
      }
      if (ids.length > 0) superseded[site] = ids;
    }
    this.bundles.set(b.bundleId, clone(b));
    for (const site of b.sites) {
      const k = key(b.bundleId, site, null);
      if (!this.rows.has(k))
        this.rows.set(k, {
          bundleId: b.bundleId,
          site,
          agent: null,
          state: 'queued',
          bytes: 0,
          reason: null,
          updatedAt: b.publishedAt,
        });
    }
    return superseded;
  }

  async getBundle(bundleId: string): Promise<BundleRow | null> {
    const b = this.bundles.get(bundleId);
    return b ? clone(b) : null;
  }

  async listBundles(site?: string): Promise<BundleRow[]> {
    return [...this.bundles.values()]
      .sort((x, y) => y.publishedAt - x.publishedAt || (x.bundleId < y.bundleId ? 1 : -1))
      .slice(0, 1000)
      .filter((b) => !site || b.sites.includes(site))
      .map(clone);
  }

  async report(rows: readonly DeliveryRow[]): Promise<void> {
    for (const r of rows) {
      if (!this.bundles.has(r.bundleId)) continue;
      this.rows.delete(key(r.bundleId, r.site, null));
      // Once superseded for a site, an agent's later report keeps the hub's view: superseded.
      const by = this.supersededBy.get(key(r.bundleId, r.site, null));
      this.rows.set(
        key(r.bundleId, r.site, r.agent),
        clone(by ? { ...r, state: 'superseded', reason: supersededReason(by) } : r),
      );
    }
  }

  async deliveries(bundleId: string): Promise<DeliveryRow[]> {
    return [...this.rows.entries()]
      .filter(([, r]) => r.bundleId === bundleId)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, r]) => clone(r));
  }

  async close(): Promise<void> {}
}
