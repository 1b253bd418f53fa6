import type {
  Approval,
  ApprovalJourney,
  ApprovalsResponse,
  Approver,
  AuditResponse,
  DriftGroupsResponse,
  DriftResponse,
  FleetResponse,
  MatrixResponse,
  NeedsResponse,
  PlanRequest,
  PlanRequestCreate,
  PlanRequestsResponse,
  PublicationsResponse,
  RefsResponse,
  RelaysResponse,
  RunDetail,
  RunsResponse,
  Session,
  SiteDetail,
  SitesQueryParams,
  SitesResponse,
  Waiver,
  WaiverCreate,
  WaiversResponse,
} from '@driftline/protocol';

/** The hub's `/api`, as the dashboard uses it. Every answer is validated against the protocol schemas. */
/** Which part of the matrix to read: as known at `at`, of one ref, site, environment or component. */
export interface MatrixPart {
  at?: string | null;
  ref?: string | null;
  site?: string | null;
  environment?: string | null;
  component?: string | null;
  /** Only cells with this status (the server filters: `status=drift` reads the drifted cells alone). */
  status?: string | null;
  /** A window's rows: only these sites. */
  sites?: readonly string[] | null;
  /** The `next` of the previous page of the same part. */
  cursor?: string | null;
}

export interface Api {
  matrix(part?: MatrixPart): Promise<MatrixResponse>;
  /** The fleet at a glance (`GET /api/fleet`): counts, link facts, the worst cells first. */
  fleet(): Promise<FleetResponse>;
  /** Each relay with its last reported health and what is wrong there (`GET /api/relays`). */
  relays(): Promise<RelaysResponse>;
  /** Refs the hub holds plans of, newest first (`GET /api/refs`). */
  refs(): Promise<RefsResponse>;
  /** What sites lack to plan, with the cells waiting for it (`GET /api/needs`). */
  needs(): Promise<NeedsResponse>;
  /** A page of sites, sorted and filtered by the hub (`GET /api/sites`); no query: the hub's first page. */
  sites(q?: SitesQueryParams): Promise<SitesResponse>;
  site(site: string): Promise<SiteDetail>;
  runs(
    site: string,
    environment: string,
    component: string,
    opts?: { status?: string | null; before?: string | null; ref?: string | null; limit?: number },
  ): Promise<RunsResponse>;
  run(runId: string): Promise<RunDetail>;
  createPlanRequest(body: PlanRequestCreate): Promise<PlanRequest>;
  /** Plan requests, newest first (`GET /api/plan-requests`, `?site=` for one site's). */
  planRequests(site?: string): Promise<PlanRequestsResponse>;
  /** Approvals of one run with their journeys (`GET /api/approvals?site=&runId=`). */
  approvals(site: string, runId: string): Promise<ApprovalsResponse>;
  /** Who holds which approver key (`GET /api/approvers`). */
  approvers(): Promise<{ approvers: Approver[] }>;
  /** Submits an approval signed in this browser (`POST /api/approvals`); the private key is never sent. */
  submitApproval(approval: Approval): Promise<ApprovalJourney>;
  /** Publications with their per-site deliveries (`?site=` keeps those targeting one site). */
  publications(site?: string): Promise<PublicationsResponse>;
  /** Who this browser is signed in as (`GET /api/session`); an `ApiError` with status 401 when nobody. */
  session(): Promise<Session>;
  /** Trades an operator token for a session cookie (`POST /api/session`). */
  signIn(token: string): Promise<Session>;
  /** Ends the session (`DELETE /api/session`). */
  signOut(): Promise<void>;
  /** The audit log, newest first; `before` pages back from an entry's id. */
  audit(opts?: { before?: string | null; limit?: number }): Promise<AuditResponse>;
  /** Open episodes, one row per signature (`GET /api/drift/groups`). */
  driftGroups(): Promise<DriftGroupsResponse>;
  /** Episodes, newest first, filtered (`GET /api/drift`). */
  drift(q: Record<string, string | number | undefined>): Promise<DriftResponse>;
  waivers(): Promise<WaiversResponse>;
  addWaiver(w: WaiverCreate): Promise<Waiver>;
  removeWaiver(id: string): Promise<Waiver>;
  /**
   * Calls `fn` whenever the hub answers 401 to a call other than signing in: the session expired or
   * ended elsewhere, and the dashboard must ask for a sign-in again. Answers an unsubscribe.
   */
  onUnauthorized(fn: () => void): () => void;
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
