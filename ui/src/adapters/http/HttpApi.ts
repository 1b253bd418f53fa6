import {
  BundlesResponseSchema,
  ErrorBodySchema,
  MatrixResponseSchema,
  type PlanRequestCreate,
  PlanRequestSchema,
  RunDetailSchema,
  RunsResponseSchema,
  SiteDetailSchema,
  SitesResponseSchema,
} from '@driftline/protocol';
import { type Api, ApiError } from '../../ports/Api.js';

const seg = encodeURIComponent;

/** The part of a zod schema this adapter needs (the UI does not depend on zod itself). */
interface Schema<T> {
  safeParse(
    v: unknown,
  ):
    | { success: true; data: T }
    | { success: false; error: { issues: { path: PropertyKey[]; message: string }[] } };
}

/** `Api` over `fetch`, relative to `base` (the page's origin by default). */
export class HttpApi implements Api {
  constructor(
    private readonly base = '',
    private readonly fetchFn: typeof fetch = (...a) => fetch(...a),
  ) {}

  private async call<T>(schema: Schema<T>, path: string, init?: RequestInit): Promise<T> {
    let res: Response;
    try {
      res = await this.fetchFn(`${this.base}${path}`, { headers: { accept: 'application/json' }, ...init });
    } catch (e) {
      throw new ApiError(
        `cannot reach the hub at ${path}: ${(e as Error).message} (check the hub is running)`,
        0,
        'network',
      );
    }
    const body: unknown = await res.json().catch(() => null);
    if (!res.ok) {
      const err = ErrorBodySchema.safeParse(body);
      const msg = err.success ? err.data.error.message : `HTTP ${res.status}`;
      throw new ApiError(`${path}: ${msg}`, res.status, err.success ? err.data.error.code : 'http');
    }
    const parsed = schema.safeParse(body);
    if (!parsed.success) {
      const first = parsed.error.issues[0];
      throw new ApiError(
        `${path}: the hub answered in a shape this dashboard does not know (${first?.path.join('.') ?? ''}: ${first?.message ?? ''}); reload, or upgrade hub and dashboard together`,
        res.status,
        'bad-shape',
      );
    }
    return parsed.data;
  }

  matrix(at: string | null) {
    return this.call(MatrixResponseSchema, `/api/matrix${at ? `?at=${seg(at)}` : ''}`);
  }
  sites() {
    return this.call(SitesResponseSchema, '/api/sites');
  }
  bundles(site?: string) {
    return this.call(BundlesResponseSchema, `/api/bundles${site ? `?site=${seg(site)}` : ''}`);
  }
  site(site: string) {
    return this.call(SiteDetailSchema, `/api/sites/${seg(site)}`);
  }
  runs(
    site: string,
    environment: string,
    component: string,
    opts: { status?: string | null; before?: string | null } = {},
  ) {
    const q = new URLSearchParams();
    if (opts.status) q.set('status', opts.status);
    if (opts.before) q.set('before', opts.before);
    const qs = q.toString();
    return this.call(
      RunsResponseSchema,
      `/api/cells/${seg(site)}/${seg(environment)}/${seg(component)}/runs${qs ? `?${qs}` : ''}`,
    );
  }
  run(runId: string) {
    return this.call(RunDetailSchema, `/api/runs/${seg(runId)}`);
  }
  createPlanRequest(body: PlanRequestCreate) {
    return this.call(PlanRequestSchema, '/api/plan-requests', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(body),
    });
  }
}
