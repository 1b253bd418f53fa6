import type {
  BundlesResponse,
  MatrixResponse,
  PlanRequest,
  PlanRequestCreate,
  RunDetail,
  RunsResponse,
  SiteDetail,
  SitesResponse,
} from '@driftline/protocol';

/** The hub's `/api`, as the dashboard uses it. Every answer is validated against the protocol schemas. */
export interface Api {
  matrix(at: string | null): Promise<MatrixResponse>;
  sites(): Promise<SitesResponse>;
  site(site: string): Promise<SiteDetail>;
  runs(
    site: string,
    environment: string,
    component: string,
    opts?: { status?: string | null; before?: string | null },
  ): Promise<RunsResponse>;
  run(runId: string): Promise<RunDetail>;
  createPlanRequest(body: PlanRequestCreate): Promise<PlanRequest>;
  /** Bundles to outposts with their per-site deliveries (`?site=` keeps those targeting one site). */
  bundles(site?: string): Promise<BundlesResponse>;
}

/** An API call that failed, with a message a person can act on. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}
