import { brotliDecompressSync } from 'node:zlib';
import {
  MatrixQuerySchema,
  MatrixResponseSchema,
  PlanRequestCreateSchema,
  PlanRequestSchema,
  PlanRequestsResponseSchema,
  type PlanSummarySchema,
  ResourceChangeSchema,
  RunDetailSchema,
  RunsResponseSchema,
  SiteDetailSchema,
  SitesResponseSchema,
  WireError,
} from '@driftline/protocol';
import Router from '@koa/router';
import type { Context } from 'koa';
import type { Logger } from 'pino';
import { z } from 'zod';
import { pendingDetail } from '../../core/detailUploads.js';
import type { EventLog } from '../../core/EventLog.js';
import type { PlanRequests } from '../../core/PlanRequests.js';
import type { Queries } from '../../core/Queries.js';
import { detailStateOf, toPlanRequest, toRunItem } from '../../core/views.js';
import type { BlobFiles } from '../../ports/BlobFiles.js';
import type { Clock } from '../../ports/Clock.js';
import type { HubStore } from '../../ports/HubStore.js';
import { readJson } from './json.js';
import { openApiDocument } from './openapi.js';
import { parseOr400 } from './parse.js';
import { EventsQuery, RunsQuery, SiteFilterQuery } from './queries.js';
import { checkRefQuery } from './refsRouter.js';
import { serveEvents } from './sse.js';

export interface ApiDeps {
  store: HubStore;
  queries: Queries;
  planRequests: PlanRequests;
  events: EventLog;
  blobs: BlobFiles;
  clock: Clock;
  version: string;
  onPlanRequest?: (r: z.infer<typeof PlanRequestSchema>) => void;
  /** Where a detail blob that would not inflate is reported. */
  logger?: Pick<Logger, 'warn'>;
  /** Cap of a detail blob's inflated size, bytes; default {@link MAX_DETAIL_BYTES}. */
  maxDetailBytes?: number;
}

/** Largest a run's redacted detail may inflate to; a bigger one is treated as unavailable (DESIGN S8). */
export const MAX_DETAIL_BYTES = 64 * 1024 * 1024;

/** The resources of a detail blob, or null when it is over the cap or not a detail (logged). */
function inflateDetail(
  bytes: Uint8Array,
  max: number,
  log: ApiDeps['logger'],
  blob: string,
): z.infer<typeof PlanDetailSchema> | null {
  let text: string;
  try {
    text = brotliDecompressSync(bytes, { maxOutputLength: max }).toString('utf8');
  } catch (err) {
    log?.warn({ blob, err: (err as Error).message }, `detail blob does not inflate within ${max} bytes`);
    return null;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    log?.warn({ blob }, 'detail blob is not JSON');
    return null;
  }
  const detail = PlanDetailSchema.safeParse(json);
  return detail.success ? detail.data : null;
}

const PlanDetailSchema = z.looseObject({ resources: z.array(ResourceChangeSchema).optional() });

/** Every answer is checked against protocol's schema before it leaves, so the OpenAPI document and the dashboard's parser can trust it. */
const send = <T extends z.ZodType>(ctx: Context, schema: T, body: z.input<T>, status = 200) => {
  ctx.status = status;
  ctx.body = schema.parse(body);
};

export function apiRouter(d: ApiDeps): Router {
  const r = new Router({ prefix: '/api' });
  r.get('/openapi.json', (ctx) => {
    ctx.body = openApiDocument(d.version);
  });
  r.get('/matrix', async (ctx) => {
    const q = parseOr400(MatrixQuerySchema, ctx.query, 'query parameter');
    checkRefQuery(q);
    const now = d.clock.now();
    const at = q.at ? Date.parse(q.at) : undefined;
    const cells = await d.queries.matrix(q, now, at);
    send(ctx, MatrixResponseSchema, { cells, asOf: new Date(at ?? now).toISOString() });
  });
  r.get('/sites', async (ctx) => {
    send(ctx, SitesResponseSchema, { sites: await d.queries.sites(d.clock.now()) });
  });
  r.get('/sites/:site', async (ctx) => {
    const site = await d.queries.site(ctx.params.site ?? '', d.clock.now());
    if (!site) throw new WireError('not-found', `no site '${ctx.params.site}' (see GET /api/sites)`);
    send(ctx, SiteDetailSchema, site);
  });
  r.get('/cells/:site/:environment/:component/runs', async (ctx) => {
    const q = parseOr400(RunsQuery, ctx.query, 'query parameter');
    const { site = '', environment = '', component = '' } = ctx.params;
    const runs = await d.store.listRuns({
      site,
      environment,
      component,
      before: q.before,
      ...(q.ref !== undefined ? { ref: q.ref } : {}),
      limit: q.limit + 1,
    });
    const page = runs.slice(0, q.limit);
    send(ctx, RunsResponseSchema, {
      runs: page.map(toRunItem),
      nextBefore: runs.length > q.limit ? (page.at(-1)?.runId ?? null) : null,
    });
  });
  r.get('/runs/:runId', async (ctx) => {
    const run = await d.store.getRun(ctx.params.runId ?? '');
    if (!run) throw new WireError('not-found', `no run '${ctx.params.runId}'`);
    let summary: z.infer<typeof PlanSummarySchema> = { ...run.summary };
    let detailAvailable = false;
    let blob: 'missing' | 'read' | 'unreadable' = 'missing';
    if (run.detailBlob) {
      const bytes = await d.blobs.readAll(run.detailBlob);
      if (bytes) blob = 'unreadable';
      // The blob is the agent's canonical redacted detail (the summary without its volatile fields, the
      // bytes its planHash covers, with the plan's values under a site key: decision 200): only its
      // resources are needed here.
      const detail = bytes
        ? inflateDetail(bytes, d.maxDetailBytes ?? MAX_DETAIL_BYTES, d.logger, run.detailBlob)
        : null;
      if (detail) {
        summary = { ...summary, resources: detail.resources ?? [] };
        detailAvailable = true;
        blob = 'read';
      }
    }
    const detailState = detailStateOf(run.detailBlob, blob);
    const pending = detailState === 'pending' ? await pendingDetail(d.store, run) : null;
    const detailPending = pending
      ? {
          ...pending,
          uploadedAt: pending.uploadedAt === null ? null : new Date(pending.uploadedAt).toISOString(),
        }
      : undefined;
    send(ctx, RunDetailSchema, {
      ...toRunItem(run),
      summary,
      detailAvailable,
      detailState,
      ...(detailPending ? { detailPending } : {}),
    });
  });
  r.get('/plan-requests', async (ctx) => {
    const { site } = parseOr400(SiteFilterQuery, ctx.query, 'query parameter');
    const rows = await d.store.listPlanRequests(site ? { site } : {});
    const now = d.clock.now();
    send(ctx, PlanRequestsResponseSchema, { requests: rows.map((r) => toPlanRequest(r, now)) });
  });
  r.get('/plan-requests/:requestId', async (ctx) => {
    const row = await d.store.getPlanRequest(ctx.params.requestId ?? '');
    if (!row) throw new WireError('not-found', `no plan request '${ctx.params.requestId}'`);
    send(ctx, PlanRequestSchema, toPlanRequest(row, d.clock.now()));
  });
  r.post('/plan-requests', async (ctx) => {
    const body = await readJson(ctx, 64 * 1024, 'a plan request body');
    const req = PlanRequestCreateSchema.safeParse(body);
    if (!req.success) {
      const i = req.error.issues[0];
      throw new WireError('bad-request', `field '${i?.path.join('.') || '?'}': ${i?.message}`);
    }
    ctx.state.auditTarget = `${req.data.site}/${req.data.environment}/${req.data.component}`;
    const result = await d.planRequests.create(req.data);
    if (!result.ok) throw new WireError(result.code, result.message);
    const out = toPlanRequest(result.request);
    ctx.state.auditTarget = `${ctx.state.auditTarget} ${out.requestId}`;
    d.onPlanRequest?.(out);
    send(ctx, PlanRequestSchema, out, 201);
  });
  r.get('/events', async (ctx) => {
    parseOr400(EventsQuery, ctx.query, 'query parameter');
    await serveEvents(ctx, d.events);
  });
  return r;
}
