import type { PublicationDeliveryState, PublicationListItem } from '@driftline/protocol';

/** One publication at one site, as the publications view and the site view show it. */
export interface PublicationSiteRow {
  publicationId: string;
  name: string;
  fileKind: string;
  size: number;
  publishedAt: string;
  site: string;
  /** `queued` until the site's agent reports the publication (it may not have pulled the manifest yet). */
  state: PublicationDeliveryState;
  bytes: number;
  reason: string | null;
  /** When the hub learnt the state; null while queued. */
  updatedAt: string | null;
}

const DONE: readonly PublicationDeliveryState[] = ['placed', 'refused', 'expired', 'superseded'];

/** Publication × target site, newest publication first, sites in the order the publication names them. */
export function publicationRows(publications: readonly PublicationListItem[]): PublicationSiteRow[] {
  const out: PublicationSiteRow[] = [];
  const newest = [...publications].sort((a, b) => (a.publishedAt < b.publishedAt ? 1 : -1));
  for (const p of newest) {
    for (const site of p.sites) {
      const d = p.deliveries?.find((x) => x.site === site);
      out.push({
        publicationId: p.publicationId,
        name: p.name,
        fileKind: p.fileKind,
        size: p.size,
        publishedAt: p.publishedAt,
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

/** The publications still on their way to `site` (not placed, refused, expired or superseded). */
export function pendingAt(publications: readonly PublicationListItem[], site: string): PublicationSiteRow[] {
  return publicationRows(publications).filter((r) => r.site === site && !DONE.includes(r.state));
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
