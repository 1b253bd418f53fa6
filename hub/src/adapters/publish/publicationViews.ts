import { Readable } from 'node:stream';
import {
  asLegacyBundle,
  type PublicationDetail,
  PublicationDetailSchema,
  type PublicationInfo,
  PublicationsResponseSchema,
  PublishQuerySchema,
  WireError,
} from '@driftline/protocol';
import Router from '@koa/router';
import type { Context } from 'koa';
import type { DeliveryRow, PublicationRow, PublicationStore } from '../../ports/PublicationStore.js';
import type { Publisher } from './Publisher.js';

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

/** Every publication (to `site` only, when given) with its deliveries, newest first. */
export async function publicationDetails(
  store: PublicationStore,
  site?: string,
): Promise<PublicationDetail[]> {
  const out: PublicationDetail[] = [];
  for (const p of await store.listPublications(site)) out.push(await publicationDetail(store, p));
  return out;
}

export async function publicationDetail(
  store: PublicationStore,
  p: PublicationRow,
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
    })),
  });
}

/** The path the deprecated `/api/bundles` routes point to (decision 170). */
export const PUBLICATIONS_PATH = '/api/publications';
/** The deprecated prefix, answered as before for one version (decision 170). */
export const LEGACY_PATH = '/api/bundles';

interface Deps {
  publications: PublicationStore;
  publisher: Publisher;
  maxUploadBytes: number;
}

/**
 * `/api/publications`: `POST` streams a file (query: site, name, kind, ttl) and answers the publication
 * (201); `GET` lists publications with per-state counts (`?site=` filters); `GET /:publicationId` adds
 * per-site delivery. A file over `maxUploadBytes` is refused from its `Content-Length` before a byte is
 * read, else once the stream passes the cap (the publisher counts); either way 413 and nothing is stored.
 * Also `/api/bundles`, the same routes under their name of before decision 170, answering the old field
 * names (`bundleId`, `bundles`) with `Deprecation` and `Link` headers that point here.
 */
export function publicationApi(d: Deps): Router[] {
  return [publicationRoutes(d, false), publicationRoutes(d, true)];
}

function publicationRoutes(d: Deps, legacy: boolean): Router {
  const r = new Router({ prefix: legacy ? LEGACY_PATH : PUBLICATIONS_PATH });
  const what = legacy ? 'a bundle' : 'a publication';
  if (legacy)
    r.use(async (ctx, next) => {
      deprecated(ctx);
      await next();
    });
  r.post('/', async (ctx) => {
    const declared = Number(ctx.get('content-length') || 0);
    if (declared > d.maxUploadBytes)
      throw new WireError(
        'payload-too-large',
        `the file is ${declared} bytes; ${what} is at most ${d.maxUploadBytes} (api.maxUploadBytes)`,
      );
    const q = PublishQuerySchema.safeParse(ctx.query);
    if (!q.success) {
      const i = q.error.issues[0];
      throw new WireError('bad-query', `query parameter '${i?.path.join('.') || '?'}': ${i?.message}`);
    }
    ctx.state.auditTarget = `${q.data.name} → ${q.data.site}`;
    // Stopping early (over the cap) must not destroy the socket before the 413 is sent.
    const body = Readable.from(ctx.req.iterator({ destroyOnReturn: false }), { objectMode: false });
    const res = await d.publisher.publish(body, {
      sites: q.data.site
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
      name: q.data.name,
      fileKind: q.data.kind,
      ttlS: q.data.ttl,
    });
    if (!res.ok) throw new WireError(res.code, res.message);
    ctx.state.auditTarget = `${res.publication.publicationId} ${ctx.state.auditTarget}`;
    ctx.status = 201;
    const detail = await publicationDetail(d.publications, res.publication);
    ctx.body = legacy ? asLegacyBundle(detail) : detail;
  });
  r.get('/', async (ctx) => {
    const site = typeof ctx.query.site === 'string' ? ctx.query.site : undefined;
    const out = await publicationDetails(d.publications, site);
    ctx.body = legacy
      ? { bundles: out.map(asLegacyBundle) }
      : PublicationsResponseSchema.parse({ publications: out });
  });
  const param = legacy ? 'bundleId' : 'publicationId';
  r.get(`/:${param}`, async (ctx) => {
    const id = ctx.params[param] ?? '';
    const p = await d.publications.getPublication(id);
    if (!p)
      throw new WireError(
        'not-found',
        legacy
          ? `no bundle '${id}' (see GET /api/bundles)`
          : `no publication '${id}' (see GET /api/publications)`,
      );
    const detail = await publicationDetail(d.publications, p);
    ctx.body = legacy ? asLegacyBundle(detail) : detail;
  });
  return r;
}

/** When the `/api/bundles` routes were deprecated (2026-11-26), as RFC 9745 writes it: `@` and Unix seconds. */
export const BUNDLES_DEPRECATED_AT = '@1795651200';

/** RFC 9745's `Deprecation` and RFC 8288's successor link on every answer of the old routes. */
function deprecated(ctx: Context): void {
  ctx.set('Deprecation', BUNDLES_DEPRECATED_AT);
  ctx.set('Link', `<${PUBLICATIONS_PATH}>; rel="successor-version"`);
}
