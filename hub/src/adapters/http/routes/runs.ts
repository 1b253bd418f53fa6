import { brotliDecompressSync } from 'node:zlib';
import {
  API_PATHS,
  type PlanSummarySchema,
  ResourceChangeSchema,
  RunsQuerySchema,
  WireError,
} from '@driftline/protocol';
import { z } from 'zod';
import { pendingDetail } from '../../../core/detailUploads.js';
import { detailStateOf, toRunItem } from '../../../core/views.js';
import { err } from '../openapiShared.js';
import type { ApiDeps } from './deps.js';
import { route } from './route.js';

/** Largest a run's redacted detail may inflate to; a bigger one is treated as unavailable (S8 in docs/architecture.md#invariants). */
export const MAX_DETAIL_BYTES = 64 * 1024 * 1024;

const PlanDetailSchema = z.looseObject({ resources: z.array(ResourceChangeSchema).optional() });

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

/** `/api/cells/…/runs` and `/api/runs/:runId`: a cell's runs, and one run with its resources. */
export const runRoutes = [
  route({
    method: 'GET',
    path: API_PATHS.runs,
    role: 'viewer',
    query: RunsQuerySchema,
    response: { status: 200, schema: 'RunsResponse', description: 'runs' },
    doc: { summary: 'Runs of one cell, newest first', others: { '400': err('bad query') } },
    handler: async (ctx, d, q) => {
      const { site = '', environment = '', component = '' } = ctx.params;
      const runs = await d.store.listRuns({
        site,
        environment,
        component,
        before: q.before,
        ...(q.ref !== undefined ? { ref: q.ref } : {}),
        ...(q.status !== undefined ? { status: q.status } : {}),
        limit: q.limit + 1,
      });
      const page = runs.slice(0, q.limit);
      return {
        runs: page.map(toRunItem),
        nextBefore: runs.length > q.limit ? (page.at(-1)?.runId ?? null) : null,
      };
    },
  }),
  route({
    method: 'GET',
    path: API_PATHS.run,
    role: 'viewer',
    response: { status: 200, schema: 'RunDetail', description: 'run' },
    doc: {
      summary: 'One run, with resources once its detail blob has arrived',
      others: { '404': err('no such run') },
    },
    handler: async (ctx, d) => {
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
      return {
        ...toRunItem(run),
        summary,
        detailAvailable,
        detailState,
        ...(detailPending ? { detailPending } : {}),
      };
    },
  }),
];
