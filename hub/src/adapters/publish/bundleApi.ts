import { Readable } from 'node:stream';
import {
  type BundleDetail,
  BundleDetailSchema,
  type BundleInfo,
  BundlePublishQuerySchema,
  BundlesResponseSchema,
  WireError,
} from '@driftline/protocol';
import Router from '@koa/router';
import type { BundleRow, BundleStore, DeliveryRow } from '../../ports/BundleStore.js';
import type { BundlePublisher } from './BundlePublisher.js';

const iso = (ms: number) => new Date(ms).toISOString();

function info(b: BundleRow, deliveries: DeliveryRow[]): BundleInfo {
  const counts: Record<string, number> = {};
  for (const d of deliveries) counts[d.state] = (counts[d.state] ?? 0) + 1;
  return {
    bundleId: b.bundleId,
    name: b.name,
    fileKind: b.fileKind,
    sha256: b.sha256,
    size: b.size,
    sites: b.sites as BundleInfo['sites'],
    publishedAt: iso(b.publishedAt),
    expiresAt: b.expiresAt === null ? null : iso(b.expiresAt),
    stateCounts: counts,
  };
}

export async function bundleDetail(store: BundleStore, b: BundleRow): Promise<BundleDetail> {
  const ds = await store.deliveries(b.bundleId);
  return BundleDetailSchema.parse({
    ...info(b, ds),
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

/**
 * `/api/bundles`: `POST` streams a file (query: site, name, kind, ttl) and answers the bundle (201);
 * `GET` lists publications with per-state counts (`?site=` filters); `GET /:bundleId` adds per-site delivery.
 * A file over `maxUploadBytes` is refused from its `Content-Length` before a byte is read, else once
 * the stream passes the cap (the publisher counts); either way 413 and nothing is stored.
 */
export function bundleApi(d: {
  bundles: BundleStore;
  publisher: BundlePublisher;
  maxUploadBytes: number;
}): Router {
  const r = new Router({ prefix: '/api/bundles' });
  r.post('/', async (ctx) => {
    const declared = Number(ctx.get('content-length') || 0);
    if (declared > d.maxUploadBytes)
      throw new WireError(
        'payload-too-large',
        `the file is ${declared} bytes; a bundle is at most ${d.maxUploadBytes} (api.maxUploadBytes)`,
      );
    const q = BundlePublishQuerySchema.safeParse(ctx.query);
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
    ctx.state.auditTarget = `${res.bundle.bundleId} ${ctx.state.auditTarget}`;
    ctx.status = 201;
    ctx.body = await bundleDetail(d.bundles, res.bundle);
  });
  r.get('/', async (ctx) => {
    const site = typeof ctx.query.site === 'string' ? ctx.query.site : undefined;
    const rows = await d.bundles.listBundles(site);
    const out = [];
    for (const b of rows) out.push(await bundleDetail(d.bundles, b));
    ctx.body = BundlesResponseSchema.parse({ bundles: out });
  });
  r.get('/:bundleId', async (ctx) => {
    const b = await d.bundles.getBundle(ctx.params.bundleId ?? '');
    if (!b) throw new WireError('not-found', `no bundle '${ctx.params.bundleId}' (see GET /api/bundles)`);
    ctx.body = await bundleDetail(d.bundles, b);
  });
  return r;
}
