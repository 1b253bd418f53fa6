import { Readable } from 'node:stream';
import {
  asLegacyBundle,
  MAX_INLINE_PUBLICATION_BYTES,
  PublishQuerySchema,
  SiteFilterQuerySchema,
  WireError,
} from '@driftline/protocol';
import {
  BUNDLES_DEPRECATED_AT,
  LEGACY_PATH,
  PUBLICATIONS_PATH,
  publicationDetail,
  publicationDetails,
  unconfirmedKey,
} from '../../publish/publicationViews.js';
import { err } from '../openapiShared.js';
import { parseOr400 } from '../parse.js';
import type { ApiDeps } from './deps.js';
import { type Route, route } from './route.js';

/**
 * `/api/publications`, or with `legacy` its deprecated name `/api/bundles` (decision 170): the same
 * routes answering the old field names (`bundleId`, `bundles`), with `Deprecation` and `Link` headers
 * that point to the new ones. `POST` streams a file (query: site, name, kind, ttl) and answers the
 * publication (201); `GET` lists publications with per-state counts (`?site=` filters); `GET /:id` adds
 * per-site delivery. A file over `maxUploadBytes` is refused from its `Content-Length` before a byte is
 * read, else once the stream passes the cap (the publisher counts); either way 413 and nothing is stored.
 */
function publicationRoutesOf(legacy: boolean): Route[] {
  const base = legacy ? LEGACY_PATH : PUBLICATIONS_PATH;
  const what = legacy ? 'a bundle' : 'a publication';
  const param = legacy ? 'bundleId' : 'publicationId';
  const old = legacy
    ? {
        deprecated: true,
        description: 'Deprecated: use /api/publications (same answer, new field names).',
      }
    : {};
  const deprecation = legacy
    ? { deprecation: { at: BUNDLES_DEPRECATED_AT, successor: PUBLICATIONS_PATH } }
    : {};
  return [
    route({
      method: 'GET',
      path: base,
      role: 'viewer',
      ...deprecation,
      // Declared, and read leniently as it always was (any `site` text filters, none lists all).
      query: SiteFilterQuerySchema,
      queryByHandler: true,
      response: legacy
        ? { status: 200, schema: 'LegacyBundlesResponse', description: 'publications', asBuilt: true }
        : { status: 200, schema: 'PublicationsResponse', description: 'publications' },
      doc: { ...old, summary: 'Publications (files published to sites) with delivery counts' },
      handler: async (ctx, d) => {
        const site = typeof ctx.query.site === 'string' ? ctx.query.site : undefined;
        const out = await publicationDetails(d.publications, site, await unconfirmedOf(d));
        return legacy ? { bundles: out.map(asLegacyBundle) } : { publications: out };
      },
    }),
    route({
      method: 'POST',
      path: base,
      role: 'publisher',
      audit: 'publication.publish',
      ...deprecation,
      // The Content-Length cap is checked before the query.
      query: PublishQuerySchema,
      queryByHandler: true,
      body: { stream: true },
      response: legacy
        ? { status: 201, schema: 'LegacyBundleDetail', description: 'published', asBuilt: true }
        : { status: 201, schema: 'PublicationDetail', description: 'published' },
      doc: {
        ...old,
        summary: 'Publish the request body to sites as a publication (streamed; at most api.maxUploadBytes)',
        queryText: {
          site: "site ids, comma-separated, or 'all'",
          name: 'name shown and used for the placed file',
          kind: 'file kind',
          ttl: 'seconds until it expires',
          inline: `a file of at most ${MAX_INLINE_PUBLICATION_BYTES} bytes travels inside its signed manifest: 1 to every site, 0 to none; default to the sites whose agents all read it (decision 360)`,
        },
        others: { '400': err('bad query or unknown site'), '413': err('over api.maxUploadBytes') },
      },
      handler: async (ctx, d) => {
        const declared = Number(ctx.get('content-length') || 0);
        if (declared > d.maxUploadBytes)
          throw new WireError(
            'payload-too-large',
            `the file is ${declared} bytes; ${what} is at most ${d.maxUploadBytes} (api.maxUploadBytes)`,
          );
        const q = parseOr400(PublishQuerySchema, ctx.query, 'query parameter');
        ctx.state.auditTarget = `${q.name} → ${q.site}`;
        // Stopping early (over the cap) must not destroy the socket before the 413 is sent.
        const body = Readable.from(ctx.req.iterator({ destroyOnReturn: false }), { objectMode: false });
        const res = await d.publisher.publish(body, {
          sites: q.site
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean),
          name: q.name,
          fileKind: q.kind,
          ttlS: q.ttl,
          ...(q.inline === undefined ? {} : { inline: q.inline === '1' }),
        });
        if (!res.ok) throw new WireError(res.code, res.message);
        ctx.state.auditTarget = `${res.publication.publicationId} ${ctx.state.auditTarget}`;
        const detail = await publicationDetail(d.publications, res.publication);
        return legacy ? asLegacyBundle(detail) : detail;
      },
    }),
    route({
      method: 'GET',
      path: `${base}/:${param}`,
      role: 'viewer',
      ...deprecation,
      response: legacy
        ? { status: 200, schema: 'LegacyBundleDetail', description: 'publication', asBuilt: true }
        : { status: 200, schema: 'PublicationDetail', description: 'publication' },
      doc: { ...old, summary: 'One publication with per-site delivery', others: { '404': err('not found') } },
      handler: async (ctx, d) => {
        const id = ctx.params[param] ?? '';
        const p = await d.publications.getPublication(id);
        if (!p)
          throw new WireError(
            'not-found',
            legacy
              ? `no bundle '${id}' (see GET /api/bundles)`
              : `no publication '${id}' (see GET /api/publications)`,
          );
        const detail = await publicationDetail(d.publications, p, await unconfirmedOf(d));
        return legacy ? asLegacyBundle(detail) : detail;
      },
    }),
  ];
}

/** The deliveries the sites' agents have not confirmed (decision 300); none when the hub does not judge. */
async function unconfirmedOf(d: Pick<ApiDeps, 'publicationResends'>) {
  if (!d.publicationResends) return undefined;
  const { list } = await d.publicationResends.unconfirmed();
  return new Set(list.map((u) => unconfirmedKey(u.publication.publicationId, u.site)));
}

export const publicationRoutes = [...publicationRoutesOf(false), ...publicationRoutesOf(true)];
