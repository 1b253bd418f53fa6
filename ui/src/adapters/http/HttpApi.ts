import {
  API_PATHS,
  type Approval,
  ApprovalJourneySchema,
  type ApprovalsQueryParams,
  ApprovalsResponseSchema,
  ApproversResponseSchema,
  type AuditQueryParams,
  AuditResponseSchema,
  DriftGroupsResponseSchema,
  DriftResponseSchema,
  ErrorBodySchema,
  FleetResponseSchema,
  fillPath,
  type MatrixQueryParams,
  MatrixResponseSchema,
  NeedsResponseSchema,
  type PlanRequestCreate,
  PlanRequestSchema,
  PlanRequestsResponseSchema,
  PublicationsResponseSchema,
  RefsResponseSchema,
  RelaysResponseSchema,
  RunDetailSchema,
  type RunsQueryParams,
  RunsResponseSchema,
  SessionSchema,
  SiteDetailSchema,
  type SiteFilterQueryParams,
  type SitesQueryParams,
  SitesResponseSchema,
  type WaiverCreate,
  WaiverSchema,
  WaiversResponseSchema,
} from '@driftline/protocol';
import { type Api, ApiError, type MatrixPart } from '../../ports/Api.js';

/**
 * `?a=1&b=x` of the parameters that are set (empty, null and 0 left out), or ''. Each read names its
 * parameters with the type protocol derives from the hub's own query schema (`…QueryParams`), so a
 * parameter the hub does not read does not compile here.
 */
function query<P extends Record<string, string | number | null | undefined>>(params: P): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v) q.set(k, String(v));
  const qs = q.toString();
  return qs ? `?${qs}` : '';
}

/** The part of a zod schema this adapter needs (the UI does not depend on zod itself). */
interface Schema<T> {
  safeParse(
    v: unknown,
  ):
    | { success: true; data: T }
    | { success: false; error: { issues: { path: PropertyKey[]; message: string }[] } };
}

/** The header that proves a cookie-authenticated write comes from this dashboard (the hub's CSRF check). */
export const CSRF_HEADER = 'x-driftline-csrf';

const SIGN_IN = API_PATHS.session;

/**
 * `Api` over `fetch`, relative to `base` (the page's origin by default). The browser sends the session
 * cookie by itself; this adapter keeps the CSRF value the hub handed out with the session and sends it
 * on every write, so no component has to.
 */
export class HttpApi implements Api {
  private csrf: string | null = null;
  private readonly unauthorized = new Set<() => void>();

  constructor(
    private readonly base = '',
    private readonly fetchFn: typeof fetch = (...a) => fetch(...a),
  ) {}

  onUnauthorized(fn: () => void) {
    this.unauthorized.add(fn);
    return () => this.unauthorized.delete(fn);
  }

  private async send(path: string, method: string, json?: unknown): Promise<Response> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (json !== undefined) headers['content-type'] = 'application/json';
    if (method !== 'GET' && method !== 'HEAD' && this.csrf) headers[CSRF_HEADER] = this.csrf;
    let res: Response;
    try {
      res = await this.fetchFn(`${this.base}${path}`, {
        method,
        headers,
        credentials: 'same-origin',
        ...(json !== undefined ? { body: JSON.stringify(json) } : {}),
      });
    } catch (e) {
      throw new ApiError(
        `cannot reach the hub at ${path}: ${(e as Error).message} (check the hub is running)`,
        0,
        'network',
      );
    }
    if (res.ok) return res;
    const body: unknown = await res.json().catch(() => null);
    const err = ErrorBodySchema.safeParse(body);
    const msg = err.success ? err.data.error.message : `HTTP ${res.status}`;
    if (res.status === 401 && !(method === 'POST' && path === SIGN_IN)) {
      this.csrf = null;
      for (const fn of [...this.unauthorized]) fn();
    }
    throw new ApiError(`${path}: ${msg}`, res.status, err.success ? err.data.error.code : 'http');
  }

  private async call<T>(schema: Schema<T>, path: string, method = 'GET', json?: unknown): Promise<T> {
    const res = await this.send(path, method, json);
    const body: unknown = await res.json().catch(() => null);
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

  async session() {
    const s = await this.call(SessionSchema, SIGN_IN);
    this.csrf = s.csrf;
    return s;
  }
  async signIn(token: string) {
    const s = await this.call(SessionSchema, SIGN_IN, 'POST', { token });
    this.csrf = s.csrf;
    return s;
  }
  async signOut() {
    await this.send(SIGN_IN, 'DELETE');
    this.csrf = null;
  }
  audit(opts: { before?: string | null; limit?: number } = {}) {
    const q: AuditQueryParams = { limit: opts.limit, before: opts.before };
    return this.call(AuditResponseSchema, `${API_PATHS.audit}${query(q)}`);
  }
  driftGroups() {
    return this.call(DriftGroupsResponseSchema, API_PATHS.driftGroups);
  }
  drift(q: Record<string, string | number | undefined>) {
    return this.call(DriftResponseSchema, `${API_PATHS.drift}${query(q)}`);
  }
  waivers() {
    return this.call(WaiversResponseSchema, API_PATHS.waivers);
  }
  addWaiver(w: WaiverCreate) {
    return this.call(WaiverSchema, API_PATHS.waivers, 'POST', w);
  }
  removeWaiver(id: string) {
    return this.call(WaiverSchema, fillPath(API_PATHS.waiver, { waiverId: id }), 'DELETE');
  }
  matrix(part: MatrixPart = {}) {
    const { site, environment, component, ref, at, status, cursor } = part;
    const sites = part.sites?.length ? part.sites.join(',') : null;
    const q: MatrixQueryParams = { site, environment, component, ref, at, status, sites, cursor };
    return this.call(MatrixResponseSchema, `${API_PATHS.matrix}${query(q)}`);
  }
  fleet() {
    return this.call(FleetResponseSchema, API_PATHS.fleet);
  }
  relays() {
    return this.call(RelaysResponseSchema, API_PATHS.relays);
  }
  refs() {
    return this.call(RefsResponseSchema, API_PATHS.refs);
  }
  needs() {
    return this.call(NeedsResponseSchema, API_PATHS.needs);
  }
  sites(q: SitesQueryParams = {}) {
    return this.call(SitesResponseSchema, `${API_PATHS.sites}${query(q)}`);
  }
  publications(site?: string) {
    const q: SiteFilterQueryParams = { site };
    return this.call(PublicationsResponseSchema, `${API_PATHS.publications}${query(q)}`);
  }
  site(site: string) {
    return this.call(SiteDetailSchema, fillPath(API_PATHS.site, { site }));
  }
  runs(
    site: string,
    environment: string,
    component: string,
    opts: { status?: string | null; before?: string | null; ref?: string | null; limit?: number } = {},
  ) {
    const q: RunsQueryParams = {
      status: opts.status,
      ref: opts.ref,
      limit: opts.limit,
      before: opts.before,
    };
    return this.call(
      RunsResponseSchema,
      `${fillPath(API_PATHS.runs, { site, environment, component })}${query(q)}`,
    );
  }
  run(runId: string) {
    return this.call(RunDetailSchema, fillPath(API_PATHS.run, { runId }));
  }
  createPlanRequest(body: PlanRequestCreate) {
    return this.call(PlanRequestSchema, API_PATHS.planRequests, 'POST', body);
  }
  planRequests(site?: string) {
    return this.call(
      PlanRequestsResponseSchema,
      `${API_PATHS.planRequests}${query<SiteFilterQueryParams>({ site })}`,
    );
  }
  approvals(site: string, runId: string) {
    const q: ApprovalsQueryParams = { site, runId };
    return this.call(ApprovalsResponseSchema, `${API_PATHS.approvals}${query(q)}`);
  }
  approvers() {
    return this.call(ApproversResponseSchema, API_PATHS.approvers);
  }
  submitApproval(approval: Approval) {
    return this.call(ApprovalJourneySchema, API_PATHS.approvals, 'POST', approval);
  }
}
