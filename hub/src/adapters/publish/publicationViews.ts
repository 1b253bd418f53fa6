import {
  API_PATHS,
  type PublicationDetail,
  PublicationDetailSchema,
  type PublicationInfo,
} from '@driftline/protocol';
import type { DeliveryRow, PublicationRow, PublicationStore } from '../../ports/PublicationStore.js';

const iso = (ms: number) => new Date(ms).toISOString();

function info(p: PublicationRow, deliveries: DeliveryRow[]): PublicationInfo {
  const counts: Record<string, number> = {};
  for (const d of deliveries) counts[d.state] = (counts[d.state] ?? 0) + 1;
  return {
    publicationId: p.publicationId,
    name: p.name,
    fileKind: p.fileKind,
    sha256: p.sha256,
    size: p.size,
    sites: p.sites as PublicationInfo['sites'],
    publishedAt: iso(p.publishedAt),
    expiresAt: p.expiresAt === null ? null : iso(p.expiresAt),
    stateCounts: counts,
  };
}

/** `publicationId/site` of the deliveries whose agent has not confirmed them (decision 300). */
export type UnconfirmedKeys = ReadonlySet<string>;
export const unconfirmedKey = (publicationId: string, site: string) => `${publicationId}/${site}`;

/** Every publication (to `site` only, when given) with its deliveries, newest first. */
export async function publicationDetails(
  store: PublicationStore,
  site?: string,
  unconfirmed?: UnconfirmedKeys,
): Promise<PublicationDetail[]> {
  const out: PublicationDetail[] = [];
  for (const p of await store.listPublications(site))
    out.push(await publicationDetail(store, p, unconfirmed));
  return out;
}

export async function publicationDetail(
  store: PublicationStore,
  p: PublicationRow,
  unconfirmed?: UnconfirmedKeys,
): Promise<PublicationDetail> {
  const ds = await store.deliveries(p.publicationId);
  return PublicationDetailSchema.parse({
    ...info(p, ds),
    deliveries: ds.map((d) => ({
      site: d.site,
      agent: d.agent,
      state: d.state,
      bytes: d.bytes,
      reason: d.reason,
      updatedAt: iso(d.updatedAt),
      ...(unconfirmed?.has(unconfirmedKey(p.publicationId, d.site)) && d.agent === null
        ? { unconfirmed: true }
        : {}),
    })),
  });
}

/** The path the deprecated `/api/bundles` routes point to (decision 170). */
export const PUBLICATIONS_PATH = API_PATHS.publications;
/** The deprecated prefix, answered as before for one version (decision 170). */
export const LEGACY_PATH = '/api/bundles';

/** When the `/api/bundles` routes were deprecated (2026-11-26), as RFC 9745 writes it: `@` and Unix seconds. */
export const BUNDLES_DEPRECATED_AT = '@1795651200';
