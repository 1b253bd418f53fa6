import { brotliDecompressSync } from 'node:zlib';
import {
  MatrixQuerySchema,
  MatrixResponseSchema,
  PlanRequestCreateSchema,
  PlanRequestSchema,
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
import { z } from 'zod';
import type { EventLog } from '../../core/EventLog.js';
import type { PlanRequests } from '../../core/PlanRequests.js';
import type { Queries } from '../../core/Queries.js';
import { toPlanRequest, toRunItem } from '../../core/views.js';
import type { BlobFiles } from '../../ports/BlobFiles.js';
import type { Clock } from '../../ports/Clock.js';
import type { HubStore } from '../../ports/HubStore.js';
import { openApiDocument } from './openapi.js';
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
}

function parseOr400<T extends z.ZodType>(schema: T, value: unknown, what: string): z.infer<T> {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const i = r.error.issues[0];
  throw new WireError('bad-query', `${what} '${i?.path.join('.') || '?'}': ${i?.message}`);
}

const PlanDetailSchema = z.looseObject({ resources: z.array(ResourceChangeSchema).optional() });

/** Every answer is checked against protocol's schema before it leaves (issue 6, item 6). */
const send = <T extends z.ZodType>(ctx: Context, schema: T, body: z.input<T>, status = 200) => {
  ctx.status = status;
  ctx.body = schema.parse(body);
};

const RunsQuery = z.object({
  before: z
    .string()
    .regex(/^[0-9A-HJKMNP-TV-Z]{26}$/)
    .optional(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
});

export function apiRouter(d: ApiDeps): Router {
  const r = new Router({ prefix: '/api' });
  r.get('/openapi.json', (ctx) => {
    ctx.body = openApiDocument(d.version);
  });
  r.get('/matrix', async (ctx) => {
    const q = parseOr400(MatrixQuerySchema, ctx.query, 'query parameter');
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
    if (run.detailBlob) {
      const bytes = await d.blobs.readAll(run.detailBlob);
      if (bytes) {
        // The blob is the agent's canonical redacted detail (the summary without its volatile fields, the
        // bytes its planHash covers): only its resources are needed here.
        const detail = PlanDetailSchema.safeParse(JSON.parse(brotliDecompressSync(bytes).toString('utf8')));
        if (detail.success) {
          summary = { ...summary, resources: detail.data.resources ?? [] };
          detailAvailable = true;
        }
      }
    }
    send(ctx, RunDetailSchema, { ...toRunItem(run), summary, detailAvailable });
  });
  r.get('/plan-requests', async (ctx) => {
    const site = typeof ctx.query.site === 'string' ? ctx.query.site : undefined;
    const rows = await d.store.listPlanRequests(site ? { site } : {});
    ctx.body = { requests: rows.map((x) => PlanRequestSchema.parse(toPlanRequest(x))) };
  });
  r.get('/plan-requests/:id', async (ctx) => {
    const row = await d.store.getPlanRequest(ctx.params.id ?? '');
    if (!row) throw new WireError('not-found', `no plan request '${ctx.params.id}'`);
    send(ctx, PlanRequestSchema, toPlanRequest(row));
  });
  r.post('/plan-requests', async (ctx) => {
    const body = await readJson(ctx);
    const req = PlanRequestCreateSchema.safeParse(body);
    if (!req.success) {
      const i = req.error.issues[0];
      throw new WireError('bad-request', `field '${i?.path.join('.') || '?'}': ${i?.message}`);
    }
    const result = await d.planRequests.create(req.data);
    if (!result.ok) throw new WireError(result.code, result.message);
    const out = toPlanRequest(result.request);
    d.onPlanRequest?.(out);
    send(ctx, PlanRequestSchema, out, 201);
  });
  r.get('/events', (ctx) => serveEvents(ctx, d.events));
  return r;
}

async function readJson(ctx: Context): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of ctx.req) {
    size += (c as Buffer).length;
    if (size > 64 * 1024) throw new WireError('payload-too-large', 'a plan request body is at most 64 KiB');
    chunks.push(c as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new WireError('bad-request', 'the body is not JSON');
  }
}
