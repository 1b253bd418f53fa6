import {
  type ApprovalJourney,
  ApprovalJourneySchema,
  ApprovalSchema,
  ApprovalsResponseSchema,
  type Approver,
  ApproversResponseSchema,
  type AttentionGroups,
  type AuditEntry,
  AuditResponseSchema,
  DriftResponseSchema,
  FleetResponseSchema,
  type HubEvent,
  type MatrixCell,
  MatrixResponseSchema,
  type Need,
  NeedsResponseSchema,
  type PlanRequest,
  PlanRequestCreateSchema,
  PlanRequestSchema,
  PlanRequestsResponseSchema,
  type PublicationListItem,
  PublicationsResponseSchema,
  RefsResponseSchema,
  type RelayInfo,
  RelaysResponseSchema,
  type Role,
  type RunDetail,
  RunDetailSchema,
  type RunListItem,
  RunsResponseSchema,
  renderError,
  type Session,
  SessionSchema,
  SiteDetailSchema,
  type SiteSummary,
  SitesResponseSchema,
  summariseFleet,
} from '@driftline/protocol';
import { HOUR, iso, matrixResponse, planRequest, siteDetail, sseFrame } from './fixtures.js';

export interface ApiAnswer {
  status: number;
  /** `undefined` for an answer without a body (204). */
  body: unknown;
}

/** The CSRF value the mock hub hands out with every session. */
export const MOCK_CSRF = 'csrf-for-this-session';

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * A stand-in for the hub's `/api`, shared by the msw handlers (component tests) and the stub HTTP server
 * (end-to-end test, benchmark). Every answer is parsed with the protocol schema before it is sent.
 */
export class MockHub {
  cells: MatrixCell[];
  sites: SiteSummary[];
  runs = new Map<string, RunListItem[]>();
  details = new Map<string, RunDetail>();
  /** Cells of refs other than the default (`@ref` cells), answered by `/api/matrix?ref=`. */
  refCells: MatrixCell[] = [];
  /** Matrices for `?at=`, by exact ISO time; anything else answers the current one. */
  history = new Map<string, MatrixCell[]>();
  /** Every call, with the CSRF header it carried (null: none). */
  requests: { path: string; body?: unknown; csrf?: string | null }[] = [];
  /** Publications, with their per-site deliveries, for `GET /api/publications`. */
  publications: PublicationListItem[] = [];
  /** Plan requests for `GET /api/plan-requests` (`?site=` keeps one site's). */
  planRequests: PlanRequest[] = [];
  /** Relays for `GET /api/relays`; null answers 404, as a hub from before it does. */
  relays: RelayInfo[] | null = null;
  /** `/api/fleet`'s grouped attention (issue 44); null: left out, as a hub from before it does. */
  attentionGroups: AttentionGroups | null = null;
  /** Tokens `POST /api/session` accepts, and whom they sign in. */
  tokens = new Map<string, { user: string; roles: Role[] }>([
    ['admin-token', { user: 'ada', roles: ['admin'] }],
    ['viewer-token', { user: 'vic', roles: ['viewer'] }],
  ]);
  /**
   * The browser's session as the hub sees it (the cookie); `null` when signed out, and then every `/api`
   * call but `POST /api/session` answers 401, as the hub does. Tests start signed in as an admin.
   */
  session: Session | null = { user: 'ada', roles: ['admin'], csrf: MOCK_CSRF, via: 'session' };
  /** `GET /api/audit`, newest first. */
  audit: AuditEntry[] = [];
  /** Approvals' journeys (`GET /api/approvals`); `POST /api/approvals` adds to them. */
  approvals: ApprovalJourney[] = [];
  /** `GET /api/approvers`. */
  approvers: Approver[] = [];
  /** More routes (the drift model of `mockDrift.ts`): answers, or null to fall through to 404. */
  extra?: (method: string, url: URL, body: unknown) => ApiAnswer | null;
  private readonly streams = new Map<(frame: string) => void, () => void>();
  private eventSeq = 0;
  private requestSeq = 0;

  constructor(world: { cells: MatrixCell[]; sites: SiteSummary[] }) {
    this.cells = world.cells;
    this.sites = world.sites;
  }

  addRuns(runs: RunListItem[], details: RunDetail[] = []) {
    for (const r of runs) {
      const key = `${r.site}/${r.environment}/${r.component}`;
      this.runs.set(key, [...(this.runs.get(key) ?? []), r]);
    }
    for (const d of details) this.details.set(d.runId, d);
  }

  /**
   * `GET /api/sites` with `sort`, `limit`, `cursor` (`o<offset>`) and `contains`, as the hub pages it
   * (decision 401); `problems` counts failed, drifted and stale cells, as the hub's read model does.
   */
  sitesPage(q: URLSearchParams) {
    const problems = new Map<string, number>();
    for (const c of this.cells)
      if (c.status === 'failed' || c.status === 'drift' || c.stale)
        problems.set(c.site, (problems.get(c.site) ?? 0) + 1);
    const name = (a: SiteSummary, b: SiteSummary) => (a.site < b.site ? -1 : a.site > b.site ? 1 : 0);
    const contact = (s: SiteSummary) => s.lastContactAt ?? '~';
    const orders: Record<string, (a: SiteSummary, b: SiteSummary) => number> = {
      site: name,
      '-site': (a, b) => name(b, a),
      lastContact: (a, b) => (contact(a) < contact(b) ? -1 : contact(a) > contact(b) ? 1 : name(a, b)),
      '-lastContact': (a, b) =>
        !a.lastContactAt !== !b.lastContactAt
          ? a.lastContactAt
            ? -1
            : 1
          : contact(a) > contact(b)
            ? -1
            : contact(a) < contact(b)
              ? 1
              : name(a, b),
      problems: (a, b) => (problems.get(b.site) ?? 0) - (problems.get(a.site) ?? 0) || name(a, b),
    };
    const contains = q.get('contains') ?? '';
    const all = this.sites
      .filter((s) => s.site.includes(contains))
      .sort(orders[q.get('sort') ?? 'site'] ?? name);
    const limit = Math.min(500, Number(q.get('limit') ?? 100));
    const offset = Number(/^o(\d+)$/.exec(q.get('cursor') ?? '')?.[1] ?? 0);
    const sites = all.slice(offset, offset + limit);
    const next = offset + sites.length < all.length ? `o${offset + sites.length}` : null;
    return { sites, total: all.length, next };
  }

  /** Ends the session on the hub's side, as expiry or a sign-out in another tab would. */
  expireSession() {
    this.session = null;
    this.dropStreams();
  }

  /** Whether `/api/events` may open now (the hub answers 401 without a session). */
  get signedIn(): boolean {
    return this.session !== null;
  }

  handle(method: string, url: URL, body?: unknown, headers: Headers = new Headers()): ApiAnswer {
    this.requests.push({
      path: `${method} ${url.pathname}${url.search}`,
      body,
      csrf: headers.get('x-driftline-csrf'),
    });
    const parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
    const notFound = (what: string) => renderError('not-found', what);
    if (parts[0] !== 'api') return notFound(url.pathname);
    const [, a, b, c, d, e] = parts;
    if (a === 'session' && method === 'POST') {
      const who = this.tokens.get((body as { token?: string } | null)?.token ?? '');
      if (!who) return renderError('unauthorized', 'no user has this token');
      this.session = SessionSchema.parse({ ...who, csrf: MOCK_CSRF, via: 'session' });
      return { status: 200, body: this.session };
    }
    if (!this.session) return renderError('unauthorized', 'sign in first');
    if (WRITES.has(method) && headers.get('x-driftline-csrf') !== this.session.csrf)
      return renderError('csrf', 'send the X-Driftline-CSRF value GET /api/session gave you');
    if (a === 'session' && method === 'GET') return { status: 200, body: SessionSchema.parse(this.session) };
    if (a === 'session' && method === 'DELETE') {
      this.session = null;
      return { status: 204, body: undefined };
    }
    if (method === 'GET' && a === 'audit' && !b) {
      const before = Number(url.searchParams.get('before') ?? Number.POSITIVE_INFINITY);
      const limit = Number(url.searchParams.get('limit') ?? 100);
      const entries = this.audit.filter((x) => x.id < before).slice(0, limit);
      return { status: 200, body: AuditResponseSchema.parse({ entries }) };
    }
    if (method === 'GET' && a === 'matrix' && !b) {
      const q = url.searchParams;
      const at = q.get('at');
      const ref = q.get('ref');
      let cells = at ? (this.history.get(at) ?? this.cells) : this.cells;
      if (ref) cells = [...cells, ...this.refCells].filter((c) => c.ref === ref);
      const site = q.get('site');
      const env = q.get('environment');
      const comp = q.get('component');
      const status = q.get('status');
      const sites = q.get('sites')?.split(',') ?? null;
      if (site || env || comp || status || sites)
        cells = cells.filter(
          (c) =>
            (!site || c.site === site) &&
            (!env || c.environment === env) &&
            (!comp || c.component === comp) &&
            (!status || c.status === status) &&
            (!sites || sites.includes(c.site)),
        );
      return { status: 200, body: MatrixResponseSchema.parse(matrixResponse(cells, at ?? undefined)) };
    }
    if (method === 'GET' && a === 'relays' && !b && this.relays)
      return { status: 200, body: RelaysResponseSchema.parse({ relays: this.relays }) };
    if (method === 'GET' && a === 'fleet' && !b) {
      const sites = this.sites.map((s) => ({
        ...s,
        agents: 1,
        agentsHeardFrom: s.lastContactAt ? 1 : 0,
        queueDepth: 4,
        oldestUnsentAt: iso(2 * HOUR),
        upstream: 'relay-dmz',
        contactWindows: ['0 * * * *'],
      }));
      const fleet = summariseFleet(this.cells, sites, iso(0));
      if (this.attentionGroups) fleet.attentionGroups = this.attentionGroups;
      return { status: 200, body: FleetResponseSchema.parse(fleet) };
    }
    if (method === 'GET' && a === 'refs' && !b) {
      const byRef = new Map<string, MatrixCell[]>();
      for (const c of [...this.cells, ...this.refCells])
        if (c.ref) byRef.set(c.ref, [...(byRef.get(c.ref) ?? []), c]);
      const refs = [...byRef].map(([ref, cs]) => ({
        ref,
        cells: cs.length,
        lastPlannedAt:
          cs
            .map((c) => c.plannedAt ?? '')
            .sort()
            .at(-1) || null,
        lastReceivedAt:
          cs
            .map((c) => c.receivedAt ?? '')
            .sort()
            .at(-1) || null,
      }));
      refs.sort((x, y) => ((x.lastPlannedAt ?? '') < (y.lastPlannedAt ?? '') ? 1 : -1));
      return { status: 200, body: RefsResponseSchema.parse({ refs }) };
    }
    if (method === 'GET' && a === 'needs' && !b) {
      const needs = new Map<string, Need>();
      for (const c of [...this.cells, ...this.refCells]) {
        if (c.status !== 'blocked') continue;
        for (const need of c.needs ?? []) {
          const k = `${c.site} ${need}`;
          const n = needs.get(k) ?? { site: c.site, need, cells: [], since: c.plannedAt };
          n.cells.push({ environment: c.environment, component: c.component, ref: c.ref ?? null });
          if (c.plannedAt && (!n.since || c.plannedAt < n.since)) n.since = c.plannedAt;
          needs.set(k, n);
        }
      }
      return { status: 200, body: NeedsResponseSchema.parse({ needs: [...needs.values()] }) };
    }
    if (method === 'GET' && a === 'sites' && !b) {
      const q = url.searchParams;
      if (![...q.keys()].length)
        return { status: 200, body: SitesResponseSchema.parse({ sites: this.sites }) };
      return { status: 200, body: SitesResponseSchema.parse(this.sitesPage(q)) };
    }
    if (method === 'GET' && a === 'sites' && b) {
      const s = this.sites.find((x) => x.site === b);
      if (!s) return notFound(`no site '${b}'`);
      return { status: 200, body: SiteDetailSchema.parse(siteDetail(s, this.cells)) };
    }
    if (method === 'GET' && a === 'cells' && b && c && d && e === 'runs') {
      const status = url.searchParams.get('status');
      const ref = url.searchParams.get('ref');
      const runs = (this.runs.get(`${b}/${c}/${d}`) ?? []).filter(
        (r) => (!status || r.status === status) && (!ref || r.ref === ref),
      );
      return { status: 200, body: RunsResponseSchema.parse({ runs, nextBefore: null }) };
    }
    if (method === 'GET' && a === 'runs' && b) {
      const r = this.details.get(b);
      if (!r) return notFound(`no run '${b}'`);
      return { status: 200, body: RunDetailSchema.parse(r) };
    }
    if (method === 'GET' && a === 'publications' && !b) {
      const site = url.searchParams.get('site');
      const publications = this.publications.filter((x) => !site || x.sites.includes(site as never));
      return { status: 200, body: PublicationsResponseSchema.parse({ publications }) };
    }
    if (method === 'GET' && a === 'plan-requests' && !b) {
      const site = url.searchParams.get('site');
      const requests = this.planRequests.filter((x) => !site || x.site === site);
      return { status: 200, body: PlanRequestsResponseSchema.parse({ requests }) };
    }
    if (method === 'POST' && a === 'plan-requests' && !b) {
      if (!this.session.roles.some((r) => r === 'operator' || r === 'admin'))
        return renderError('forbidden', 'filing a plan request needs the operator role');
      const parsed = PlanRequestCreateSchema.safeParse(body);
      if (!parsed.success) return renderError('bad-request', 'site, environment and component are required');
      const known = this.cells.some(
        (x) =>
          x.site === parsed.data.site &&
          x.environment === parsed.data.environment &&
          x.component === parsed.data.component,
      );
      if (!known)
        return renderError(
          'unprocessable',
          `no cell ${parsed.data.site} ${parsed.data.environment}/${parsed.data.component}`,
        );
      const req = planRequest({ ...parsed.data, requestId: `pr-${++this.requestSeq}` });
      return { status: 201, body: PlanRequestSchema.parse(req) };
    }
    const approvals = this.handleApprovals(method, a, b, url, body);
    if (approvals) return approvals;
    const extra = this.extra?.(method, url, body);
    if (extra) return extra;
    // Without a drift model (`mockDrift.ts`): no episodes, as a hub that has seen none answers.
    if (method === 'GET' && url.pathname === '/api/drift')
      return { status: 200, body: DriftResponseSchema.parse({ episodes: [], nextCursor: null }) };
    return notFound(`${method} ${url.pathname}`);
  }

  /** `/api/approvers` and `/api/approvals`, as the hub answers them (signatures are the test's to check). */
  private handleApprovals(
    method: string,
    a: string | undefined,
    b: string | undefined,
    url: URL,
    body: unknown,
  ): ApiAnswer | null {
    if (b) return null;
    if (method === 'GET' && a === 'approvers')
      return { status: 200, body: ApproversResponseSchema.parse({ approvers: this.approvers }) };
    if (method === 'GET' && a === 'approvals') {
      const site = url.searchParams.get('site');
      const runId = url.searchParams.get('runId');
      const approvals = this.approvals.filter((x) => x.site === site && (!runId || x.runId === runId));
      return { status: 200, body: ApprovalsResponseSchema.parse({ approvals }) };
    }
    if (method === 'POST' && a === 'approvals') {
      if (!this.session?.roles.some((r) => r === 'approver' || r === 'admin'))
        return renderError('forbidden', 'approving needs the approver role');
      const parsed = ApprovalSchema.safeParse(body);
      if (!parsed.success) return renderError('unprocessable', 'approval refused: malformed');
      const c = parsed.data.claims;
      const journey = ApprovalJourneySchema.parse({
        ...c,
        approver: parsed.data.approver,
        approverName: this.approvers.find((x) => x.key === parsed.data.approver)?.name ?? null,
        approvedAt: new Date(c.approvedAt).toISOString(),
        expiresAt: new Date(c.expiresAt).toISOString(),
        submittedAt: new Date(c.approvedAt).toISOString(),
        deliveredAt: null,
        state: 'submitted',
        reason: null,
        receivedAt: null,
        startedAt: null,
        finishedAt: null,
        nextRunId: null,
      });
      this.approvals.push(journey);
      return { status: 201, body: journey };
    }
    return null;
  }

  /** Opens an event stream; `close` ends it from the server side. Answers an unsubscribe. */
  openStream(send: (frame: string) => void, close: () => void = () => {}): () => void {
    this.streams.set(send, close);
    return () => this.streams.delete(send);
  }

  /** Ends every open event stream, as a hub restart or a dropped link would. */
  dropStreams() {
    const closes = [...this.streams.values()];
    this.streams.clear();
    for (const close of closes) close();
  }

  get openStreams(): number {
    return this.streams.size;
  }

  /** Sends an event to every open stream (and applies cell and site updates to the state). */
  emit(event: HubEvent) {
    if (event.type === 'cell-updated') {
      const i = this.cells.findIndex(
        (x) =>
          x.site === event.cell.site &&
          x.environment === event.cell.environment &&
          x.component === event.cell.component,
      );
      if (i >= 0) this.cells[i] = event.cell;
      else this.cells.push(event.cell);
    }
    const frame = sseFrame(event, String(++this.eventSeq));
    for (const send of this.streams.keys()) send(frame);
  }
}
