import { FLEET_MOVED_SITES, type HubEvent, type PlanRequest } from '@driftline/protocol';
import type { CellRow, PlanRequestRow } from '../ports/HubStore.js';
import type { Judged } from './FleetJudge.js';
import type { FleetReads } from './fleet/FleetReads.js';
import type { Committed } from './ingestTypes.js';
import { toMatrixCell, toPlanRequest, toRunItem, type ViewContext } from './views.js';

export interface LiveEventsDeps {
  /** Sends an event to `/api/events` listeners: this hub's, and through the database other hubs' too. */
  publish(event: HubEvent): void;
  /** Whether anyone may be listening: a dashboard of this hub, or (`shared`) of another hub on the database. */
  listening(): boolean;
  queries: { fleet: Pick<FleetReads, 'siteSummaries' | 'totals'> };
  now(): number;
  /** Expected contact interval (s) for sites whose agents declared none. */
  defaultContactIntervalS: number | null;
}

/**
 * The live-event fan-out of `/api/events`: what changed in the hub's state (a commit, a delivery, a
 * sweep, a plan request) becomes the events a dashboard updates its cells, runs, sites and plan
 * requests from, each in the shape the API serves.
 */
export class LiveEvents {
  constructor(private readonly deps: LiveEventsDeps) {}

  /**
   * An ingest commit: the runs and cells that changed (an unchanged confirmation moves ages, not cells:
   * it is counted in the batch's `fleet-moved`, not sent), its plan requests, one `fleet-moved` with the
   * new totals, then the summaries of the sites it heard from. Nothing is read when no one listens.
   */
  async committed(c: Committed): Promise<void> {
    const ctx = this.context();
    const changedRuns = new Set(c.runs.filter((r) => !r.unchanged).map((r) => r.runId));
    for (const run of c.runs)
      if (changedRuns.has(run.runId)) this.deps.publish({ type: 'run-added', run: toRunItem(run) });
    const moved = c.cells.filter((cell) => changedRuns.has(cell.runId));
    for (const cell of moved)
      this.deps.publish({ type: 'cell-updated', cell: toMatrixCell(cell, ctx, false) });
    for (const r of c.planRequests) this.requestRow(r);
    await this.moved(
      [...c.sites, ...c.cells.map((x) => x.site)],
      moved.length,
      c.cells.length - moved.length,
    );
    await this.sites(c.sites);
  }

  /** A sweep: plan requests that expired, cells gone stale, sites now unreachable. */
  async swept(r: {
    advanced?: number;
    expired: PlanRequestRow[];
    staleCells: CellRow[];
    unreachableSites: string[];
  }): Promise<void> {
    const ctx = this.context();
    for (const x of r.expired) this.requestRow(x);
    for (const c of r.staleCells)
      this.deps.publish({ type: 'cell-updated', cell: toMatrixCell(c, ctx, false) });
    if ((r.advanced ?? 0) > 0 || r.staleCells.length > 0 || r.unreachableSites.length > 0)
      await this.moved([...r.unreachableSites, ...r.staleCells.map((c) => c.site)], r.advanced ?? 0, 0);
    await this.sites(r.unreachableSites);
  }

  /**
   * What a sweep judged anew with nothing ingested (docs/decisions/585-live-is-live.md): the summaries of
   * the sites whose contact state moved, then one `fleet-judged` naming them and the relays whose problems
   * moved; a quiet sweep sends `fleet-judged` alone now and then, as a heartbeat.
   */
  async judged(j: Judged): Promise<void> {
    if (!j.send || !this.deps.listening()) return;
    await this.sites(j.sites);
    this.deps.publish({
      type: 'fleet-judged',
      at: new Date(this.deps.now()).toISOString(),
      sites: j.sites.slice(0, FLEET_MOVED_SITES),
      moreSites: j.sites.length > FLEET_MOVED_SITES,
      relays: j.relays,
      withinS: j.withinS,
    });
  }

  /** One `fleet-moved` for a batch: the sites it touched and the fleet's totals now. */
  private async moved(sites: string[], changed: number, confirmed: number): Promise<void> {
    if (!this.deps.listening()) return;
    const all = [...new Set(sites)].sort();
    this.deps.publish({
      type: 'fleet-moved',
      at: new Date(this.deps.now()).toISOString(),
      sites: all.slice(0, FLEET_MOVED_SITES),
      moreSites: all.length > FLEET_MOVED_SITES,
      changed,
      confirmed,
      totals: await this.deps.queries.fleet.totals(),
    });
  }

  /** A plan request in its row form (delivered, expired, sent again); `now` dates its state when given. */
  requestRow(r: PlanRequestRow, now?: number): void {
    this.deps.publish({ type: 'plan-request-updated', request: toPlanRequest(r, now) });
  }

  /** A plan request in the API's form (made or cancelled through the API). */
  request(r: PlanRequest): void {
    this.deps.publish({ type: 'plan-request-updated', request: r });
  }

  /** The summaries of `sites`, read from the read model; nothing when no one listens. */
  async sites(sites: string[]): Promise<void> {
    if (!this.deps.listening() || sites.length === 0) return;
    // Only these sites' rows and counts are read, never the fleet.
    for (const s of await this.deps.queries.fleet.siteSummaries([...new Set(sites)], this.deps.now()))
      this.deps.publish({ type: 'site-updated', site: s });
  }

  private context(): ViewContext {
    return { now: this.deps.now(), defaultContactIntervalS: this.deps.defaultContactIntervalS };
  }
}
