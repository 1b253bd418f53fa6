import {
  type BundleListItem,
  BundlesResponseSchema,
  type HubEvent,
  type MatrixCell,
  MatrixResponseSchema,
  PlanRequestCreateSchema,
  PlanRequestSchema,
  type RunDetail,
  RunDetailSchema,
  type RunListItem,
  RunsResponseSchema,
  renderError,
  SiteDetailSchema,
  type SiteSummary,
  SitesResponseSchema,
} from '@driftline/protocol';
import { matrixResponse, planRequest, siteDetail, sseFrame } from './fixtures.js';

export interface ApiAnswer {
  status: number;
  body: unknown;
}

/**
 * A stand-in for the hub's `/api`, shared by the msw handlers (component tests) and the stub HTTP server
 * (end-to-end test, benchmark). Every answer is parsed with the protocol schema before it is sent.
 */
export class MockHub {
  cells: MatrixCell[];
  sites: SiteSummary[];
  runs = new Map<string, RunListItem[]>();
  details = new Map<string, RunDetail>();
  /** Matrices for `?at=`, by exact ISO time; anything else answers the current one. */
  history = new Map<string, MatrixCell[]>();
  requests: { path: string; body?: unknown }[] = [];
  /** Bundles to outposts, with their per-site deliveries, for `GET /api/bundles`. */
  bundles: BundleListItem[] = [];
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

  handle(method: string, url: URL, body?: unknown): ApiAnswer {
    this.requests.push({ path: `${method} ${url.pathname}${url.search}`, body });
    const parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
    const notFound = (what: string) => renderError('not-found', what);
    if (parts[0] !== 'api') return notFound(url.pathname);
    const [, a, b, c, d, e] = parts;
    if (method === 'GET' && a === 'matrix' && !b) {
      const at = url.searchParams.get('at');
      const cells = at ? (this.history.get(at) ?? this.cells) : this.cells;
      return { status: 200, body: MatrixResponseSchema.parse(matrixResponse(cells, at ?? undefined)) };
    }
    if (method === 'GET' && a === 'sites' && !b) {
      return { status: 200, body: SitesResponseSchema.parse({ sites: this.sites }) };
    }
    if (method === 'GET' && a === 'sites' && b) {
      const s = this.sites.find((x) => x.site === b);
      if (!s) return notFound(`no site '${b}'`);
      return { status: 200, body: SiteDetailSchema.parse(siteDetail(s, this.cells)) };
    }
    if (method === 'GET' && a === 'cells' && b && c && d && e === 'runs') {
      const status = url.searchParams.get('status');
      const runs = (this.runs.get(`${b}/${c}/${d}`) ?? []).filter((r) => !status || r.status === status);
      return { status: 200, body: RunsResponseSchema.parse({ runs, nextBefore: null }) };
    }
    if (method === 'GET' && a === 'runs' && b) {
      const r = this.details.get(b);
      if (!r) return notFound(`no run '${b}'`);
      return { status: 200, body: RunDetailSchema.parse(r) };
    }
    if (method === 'GET' && a === 'bundles' && !b) {
      const site = url.searchParams.get('site');
      const bundles = this.bundles.filter((x) => !site || x.sites.includes(site as never));
      return { status: 200, body: BundlesResponseSchema.parse({ bundles }) };
    }
    if (method === 'POST' && a === 'plan-requests' && !b) {
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
    return notFound(`${method} ${url.pathname}`);
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
