import type { BundleDeliveryState, BundleListItem } from '@driftline/protocol';

/** One bundle at one site, as the bundles view and the site view show it. */
export interface BundleSiteRow {
  bundleId: string;
  name: string;
  fileKind: string;
  size: number;
  publishedAt: string;
  site: string;
  /** `queued` until the site's agent reports the bundle (it may not have pulled the manifest yet). */
  state: BundleDeliveryState;
  bytes: number;
  reason: string | null;
  /** When the hub learnt the state; null while queued. */
  updatedAt: string | null;
}

const DONE: readonly BundleDeliveryState[] = ['placed', 'refused', 'expired', 'superseded'];

/** Bundle × target site, newest bundle first, sites in the order the bundle names them. */
export function bundleRows(bundles: readonly BundleListItem[]): BundleSiteRow[] {
  const out: BundleSiteRow[] = [];
  const newest = [...bundles].sort((a, b) => (a.publishedAt < b.publishedAt ? 1 : -1));
  for (const b of newest) {
    for (const site of b.sites) {
      const d = b.deliveries?.find((x) => x.site === site);
      out.push({
        bundleId: b.bundleId,
        name: b.name,
        fileKind: b.fileKind,
        size: b.size,
        publishedAt: b.publishedAt,
        site,
        state: d?.state ?? 'queued',
        bytes: d?.bytes ?? 0,
        reason: d?.reason ?? null,
        updatedAt: d?.updatedAt ?? null,
      });
    }
  }
  return out;
}

/** The bundles still on their way to `site` (not placed, refused, expired or superseded). */
export function pendingAt(bundles: readonly BundleListItem[], site: string): BundleSiteRow[] {
  return bundleRows(bundles).filter((r) => r.site === site && !DONE.includes(r.state));
}

/** "12.5 MiB", "640 KiB", "12 B". */
export function formatBytes(n: number): string {
  if (n >= 1024 ** 3) return `${(n / 1024 ** 3).toFixed(1)} GiB`;
  if (n >= 1024 ** 2) return `${(n / 1024 ** 2).toFixed(1)} MiB`;
  if (n >= 1024) return `${Math.round(n / 1024)} KiB`;
  return `${n} B`;
}

/** Whole percent received, 100 for an empty file. */
export const percent = (bytes: number, size: number) =>
  size > 0 ? Math.floor((Math.min(bytes, size) / size) * 100) : 100;
