import type { MatrixCell, MatrixQuery, SiteContact, SiteDetail, SiteSummary } from '@driftline/protocol';
import type { AgentRow, ReadStore, SiteRow } from '../ports/HubStore.js';
import { type ContactPlans, cellWithContact } from './contact/ContactPlans.js';
import { withDiagnostics } from './diagnostic.js';
import { FleetReads } from './fleet/FleetReads.js';
import { MatrixWindow } from './fleet/MatrixWindow.js';
import { RefMatrixPages } from './fleet/RefMatrixPages.js';
import { siteBriefs } from './fleet/siteContext.js';
import { type WaivedCells, waivedKey } from './fleet/waivedDrift.js';
import type { PublicationReader } from './onTheWay.js';
import { RefQueries } from './RefQueries.js';
import {
  isUnreachable,
  noDataCells,
  toAgentInfo,
  toMatrixCell,
  toSiteSummary,
  type ViewContext,
} from './views.js';

/** Read models for the API, built from the store at `now` (or `at`). */
export class Queries {
  /** Plans of refs: the gate, the ref's matrix, needs, sources. */
  readonly refs: RefQueries;
  /** Fleet-wide views from the read model (docs/decisions/400-fleet-read-model.md). */
  readonly fleet: FleetReads;
  /** Windows of the matrix now, through the read model's indexes. */
  readonly window: MatrixWindow;
  /** Pages of a ref's matrix, through the ref index (docs/decisions/650-ref-matrix-pages.md). */
  readonly refPages: RefMatrixPages;

  constructor(
    private readonly store: ReadStore,
    private readonly defaultContactIntervalS: number | null,
    publications: PublicationReader | null = null,
    /** Judges silence by each site's contact plan (docs/decisions/260-contact-plans.md); absent: by interval only. */
    readonly contactPlans?: ContactPlans,
  ) {
    this.refs = new RefQueries(store, publications);
    this.fleet = new FleetReads(store, defaultContactIntervalS, contactPlans);
    this.window = new MatrixWindow(store, defaultContactIntervalS, contactPlans);
    this.refPages = new RefMatrixPages(store, this.refs, defaultContactIntervalS, contactPlans);
  }

  private waived?: WaivedCells;

  /**
   * Cells (`site\0environment\0component`) whose open drift is all waived (decision 421): marked
   * `driftWaived`, so attention leaves them out, in every view (the matrix, its windows and the fleet's
   * counts). Set by the hub when it keeps drift episodes.
   */
  get waivedCells(): WaivedCells | undefined {
    return this.waived;
  }
  set waivedCells(f: WaivedCells | undefined) {
    this.waived = f;
    this.fleet.waivedCells = f;
    this.window.waivedCells = f;
    this.refPages.waivedCells = f;
  }

  private ctx(now: number): ViewContext {
    return { now, defaultContactIntervalS: this.defaultContactIntervalS };
  }

  private async context(site?: string) {
    const agents = await this.store.listAgents(site);
    const bySite = new Map<string, AgentRow[]>();
    for (const a of agents) bySite.set(a.site, [...(bySite.get(a.site) ?? []), a]);
    const sites = new Map<string, SiteRow>();
    for (const s of site ? [await this.store.getSite(site)] : await this.store.listSites())
      if (s) sites.set(s.site, s);
    return { bySite, sites };
  }

  /** The site's contact plan at `now`, or null without plans (or for a time in the past). */
  private contactOf(
    site: string,
    row: SiteRow | null,
    agents: readonly AgentRow[],
    now: number,
  ): SiteContact | null {
    return this.contactPlans ? this.contactPlans.of(site, agents, row?.lastContactAt ?? null, now) : null;
  }

  /**
   * The matrix: the default cells now (or at `at`), or with `ref` the cells whose plans are of that ref
   * (`at` is not combined with `ref`), each with `no-data` for cells declared but not planned yet.
   */
  async matrix(q: Omit<MatrixQuery, 'at'>, now: number, at?: number): Promise<MatrixCell[]> {
    const ctx = this.ctx(at ?? now);
    const { bySite, sites } = await this.context(q.site);
    const rows =
      q.ref !== undefined
        ? await this.refs.cellsOf(q.ref, q.site)
        : at !== undefined
          ? await this.store.cellsAt(at)
          : await this.store.listCells(q.site);
    const contacts = new Map<string, SiteContact | null>();
    const contact = (site: string) => {
      if (at !== undefined) return null;
      if (!contacts.has(site))
        contacts.set(site, this.contactOf(site, sites.get(site) ?? null, bySite.get(site) ?? [], now));
      return contacts.get(site) ?? null;
    };
    const unreachable = (site: string) => {
      if (at !== undefined) return false;
      const judged = contact(site);
      if (judged?.judged) return judged.state === 'unreachable';
      return isUnreachable(sites.get(site) ?? null, bySite.get(site) ?? [], ctx);
    };
    const judge = (c: MatrixCell): MatrixCell => {
      const k = contact(c.site);
      return k ? cellWithContact(c, k, sites.get(c.site)?.lastContactAt ?? null, now) : c;
    };
    const cells = rows
      .filter((c) => !q.site || c.site === q.site)
      .map((c) => judge(toMatrixCell(c, ctx, unreachable(c.site))));
    if (at === undefined) {
      const have = new Set(cells.map((c) => `${c.site}/${c.environment}/${c.component}`));
      for (const [site, agents] of bySite)
        cells.push(
          ...(q.ref !== undefined
            ? this.refs.noData(agents, q.ref, have, unreachable)
            : noDataCells(agents, have, unreachable(site)).map(judge)),
        );
    }
    const waived = at === undefined && this.waivedCells ? await this.waivedCells(now) : null;
    if (waived?.size)
      for (const [i, c] of cells.entries())
        if (waived.has(waivedKey(c))) cells[i] = { ...c, driftWaived: true };
    const shown = cells.filter(
      (c) =>
        (!q.environment || c.environment === q.environment) &&
        (!q.component || c.component === q.component) &&
        (!q.status || c.status === q.status) &&
        (q.stale === undefined || c.stale === q.stale),
    );
    return (await withDiagnostics(this.store, shown)).sort(
      (a, b) =>
        a.site.localeCompare(b.site) ||
        a.environment.localeCompare(b.environment) ||
        a.component.localeCompare(b.component),
    );
  }

  async sites(now: number): Promise<SiteSummary[]> {
    const { bySite, sites } = await this.context();
    const cells = await this.matrix({}, now);
    const known = new Set([...sites.keys(), ...bySite.keys()]);
    return [...known].sort().map((s) =>
      this.summary(
        sites.get(s) ?? { site: s, lastContactAt: null, upstream: null, unreachableNotifiedFor: null },
        bySite.get(s) ?? [],
        cells.filter((c) => c.site === s),
        now,
      ),
    );
  }

  /**
   * Each site's standing against its contact plan, from site rows and agent briefs alone: the sweeper's
   * notices and the overdue gauge ask every sweep, and `sites` reads and judges every cell of the fleet.
   * Empty without contact plans.
   */
  async siteContacts(
    now: number,
  ): Promise<{ site: string; lastContactAt: number | null; contact: SiteContact }[]> {
    const plans = this.contactPlans;
    if (!plans) return [];
    const { names, rows, agents } = await siteBriefs(this.store);
    return names.map((site) => {
      const lastContactAt = rows.get(site)?.lastContactAt ?? null;
      return { site, lastContactAt, contact: plans.of(site, agents.get(site) ?? [], lastContactAt, now) };
    });
  }

  /** The site's summary, its silence judged by its contact plan when it has one. */
  private summary(
    row: SiteRow,
    agents: readonly AgentRow[],
    cells: readonly MatrixCell[],
    now: number,
  ): SiteSummary {
    const base = toSiteSummary(row, agents, cells, this.ctx(now));
    const contact = this.contactOf(row.site, row, agents, now);
    if (!contact) return base;
    return { ...base, ...(contact.judged ? { unreachable: contact.state === 'unreachable' } : {}), contact };
  }

  async site(site: string, now: number): Promise<SiteDetail | null> {
    const { bySite, sites } = await this.context(site);
    const agents = bySite.get(site) ?? [];
    const row = sites.get(site);
    if (!row && agents.length === 0) return null;
    const siteRow = row ?? { site, lastContactAt: null, upstream: null, unreachableNotifiedFor: null };
    const matrix = await this.matrix({ site }, now);
    return {
      ...this.summary(siteRow, agents, matrix, now),
      agents: agents.map(toAgentInfo),
      upstream: siteRow.upstream,
      contactWindows: [...new Set(agents.flatMap((a) => a.contactWindows))],
      matrix,
    };
  }
}
