import {
  ATTENTION_KINDS,
  type AttentionItem,
  type AttentionKind,
  type FleetEnvironment,
  type FleetResponse,
  type FleetSite,
  groupAttention,
  linkState,
  type RelayInfo,
  SITES_PAGE_DEFAULT,
  type SilentSite,
  type SiteContact,
  type SiteSummary,
  type SitesQuery,
  silentSite,
} from '@driftline/protocol';
import type { AgentFacts, CellCount, CellRow, ReadStore } from '../../ports/HubStore.js';
import type { ContactPlans } from '../contact/ContactPlans.js';
import type { ViewContext } from '../views.js';
import { attentionInput, EXACT_KIND_CAP, type KindCells, onceEachKind } from './attentionInput.js';
import {
  addCount,
  addCounts,
  addNoData,
  addTally,
  byKey,
  emptyTally,
  sumTallies,
  type Tally,
} from './counted.js';
import { custodyHeld } from './custodyHeld.js';
import { countsJudgedAt, judgedAt } from './judgedStale.js';
import {
  declaredByEnvironment,
  declaredBySite,
  emptySiteRow,
  judgedSummary,
  linkFacts,
  type SiteRows,
  siteBriefs,
  siteRows,
} from './siteContext.js';
import {
  countsWithoutWaived,
  WAIVED_CELLS_CAP,
  type WaivedCells,
  waivedAt,
  waivedKey,
} from './waivedDrift.js';

const iso = (t: number | null) => (t === null ? null : new Date(t).toISOString());
const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** What the fleet reads need of the store: counts, windows and site rows, never every cell. */
export type FleetStore = Pick<
  ReadStore,
  | 'cellCounts'
  | 'attentionCells'
  | 'pageSites'
  | 'getSite'
  | 'listSites'
  | 'listAgents'
  | 'listAgentBriefs'
  | 'pageCells'
  | 'getCells'
>;

/** One site's cells counted per environment, `no-data` included. */
interface SiteTally {
  total: Tally;
  perEnv: Map<string, Tally>;
}

/**
 * The fleet-wide views from the read model (docs/decisions/400-fleet-read-model.md): `/api/fleet`,
 * `/api/sites` pages and the site summaries of live events. Reads counts and the site and agent rows,
 * never every cell; `no-data` cells are the declared cells less those planned (per site and environment).
 */
export class FleetReads {
  constructor(
    private readonly store: FleetStore,
    private readonly defaultContactIntervalS: number | null,
    private readonly contactPlans?: ContactPlans,
  ) {}

  /** Cells whose drift is all waived (decision 421): set by the hub when it keeps drift episodes. */
  waivedCells?: WaivedCells;

  /** The count rows with judged staleness (`judgedCounts`) and waived drift set aside (`waivedDrift.ts`). */
  private async counts(
    counts: readonly CellCount[],
    contacts: ReadonlyMap<string, SiteContact | null>,
    lastContact: (site: string) => number | null,
    now: number,
    keyOf: (c: CellRow) => string,
    waived: ReadonlySet<string>,
  ): Promise<CellCount[]> {
    const judged = await this.judgedCounts(counts, contacts, lastContact, now, keyOf);
    return countsWithoutWaived(this.store, waived, judged, keyOf, now);
  }

  /** Each site's contact judgement, once per read (the counts and the summaries both need it). */
  private contacts<A extends AgentFacts>(rows: SiteRows<A>, now: number): Map<string, SiteContact | null> {
    const out = new Map<string, SiteContact | null>();
    for (const site of rows.names)
      out.set(
        site,
        this.contactPlans?.of(
          site,
          rows.agents.get(site) ?? [],
          rows.rows.get(site)?.lastContactAt ?? null,
          now,
        ) ?? null,
      );
    return out;
  }

  private async waived(now: number): Promise<ReadonlySet<string>> {
    return this.waivedCells ? this.waivedCells(now) : new Set<string>();
  }

  /** `attentionCells` of one kind without the cells whose drift is waived (read a bounded margin more). */
  private async attentionOf(kind: string, limit: number, waived: ReadonlySet<string>): Promise<CellRow[]> {
    if (kind !== 'drift' || waived.size === 0) return this.store.attentionCells({ kind, limit });
    const rows = await this.store.attentionCells({
      kind,
      limit: limit + Math.min(waived.size, WAIVED_CELLS_CAP),
    });
    return rows.filter((c) => !waived.has(waivedKey(c))).slice(0, limit);
  }

  private ctx(now: number): ViewContext {
    return { now, defaultContactIntervalS: this.defaultContactIntervalS };
  }

  /** Per site and environment: the read model's counts plus the declared cells not planned yet. */
  private tallies(
    names: readonly string[],
    siteEnv: readonly CellCount[],
    declared: ReadonlyMap<string, ReadonlyMap<string, number>>,
  ): Map<string, SiteTally> {
    const out = new Map<string, SiteTally>();
    for (const site of names) out.set(site, { total: emptyTally(), perEnv: new Map() });
    for (const c of siteEnv) {
      const slash = c.key.indexOf('/');
      const t = out.get(c.key.slice(0, slash));
      if (!t) continue;
      const env = c.key.slice(slash + 1);
      const e = t.perEnv.get(env) ?? emptyTally();
      t.perEnv.set(env, addCount(e, c));
    }
    for (const [site, t] of out) {
      for (const [env, n] of declared.get(site) ?? []) {
        const e = t.perEnv.get(env) ?? emptyTally();
        t.perEnv.set(env, addNoData(e, n - e.withData));
      }
      for (const e of t.perEnv.values()) addTally(t.total, e);
    }
    return out;
  }

  /**
   * The count rows with each contact-judged site's staleness judged at its last contact plus the grace, as
   * its matrix cells are (`judgedStale.ts`): a healthy site between windows reads no stale cells.
   */
  private async judgedCounts(
    counts: readonly CellCount[],
    contacts: ReadonlyMap<string, SiteContact | null>,
    lastContact: (site: string) => number | null,
    now: number,
    keyOf: (c: CellRow) => string,
  ): Promise<CellCount[]> {
    const at = new Map<string, number>();
    for (const [site, contact] of contacts) {
      const t = judgedAt(contact, lastContact(site), now);
      if (t !== null) at.set(site, t);
    }
    if (at.size === 0) return [...counts];
    const bySite = new Map<string, CellCount[]>();
    const out: CellCount[] = [];
    for (const r of counts) {
      const site = r.key.includes('/') ? r.key.slice(0, r.key.indexOf('/')) : r.key;
      if (!at.has(site)) out.push(r);
      else bySite.set(site, [...(bySite.get(site) ?? []), r]);
    }
    const judged = await Promise.all(
      [...at].map(([site, t]) => countsJudgedAt(this.store, site, t, bySite.get(site) ?? [], keyOf)),
    );
    return out.concat(...judged);
  }

  private summaries<A extends AgentFacts>(
    rows: SiteRows<A>,
    tallies: Map<string, SiteTally>,
    contacts: ReadonlyMap<string, SiteContact | null>,
    now: number,
  ): SiteSummary[] {
    const ctx = this.ctx(now);
    return rows.names.map((s) =>
      judgedSummary(
        rows.rows.get(s) ?? emptySiteRow(s),
        rows.agents.get(s) ?? [],
        tallies.get(s)?.total ?? emptyTally(),
        ctx,
        contacts.get(s) ?? null,
      ),
    );
  }

  /** The summaries of `names` (those that exist), as `/api/sites` shows them: one count read for all. */
  async siteSummaries(names: readonly string[], now: number): Promise<SiteSummary[]> {
    const rows = await siteRows(this.store, names);
    rows.names = rows.names.filter((n) => rows.rows.has(n) || rows.agents.has(n));
    const contacts = this.contacts(rows, now);
    const counts = byKey(
      await this.counts(
        await this.store.cellCounts('site', rows.names),
        contacts,
        (site) => rows.rows.get(site)?.lastContactAt ?? null,
        now,
        (c) => c.site,
        waivedAt(await this.waived(now), new Set(rows.names)),
      ),
    );
    const tallies = new Map<string, SiteTally>();
    for (const site of rows.names) {
      const total = addCounts(emptyTally(), counts.get(site) ?? []);
      let declared = 0;
      for (const n of declaredByEnvironment(rows.agents.get(site) ?? []).values()) declared += n;
      tallies.set(site, { total: addNoData(total, declared - total.withData), perEnv: new Map() });
    }
    return this.summaries(rows, tallies, contacts, now);
  }

  /** The fleet's planned cells counted (no `no-data`): one read of the `environment` counts. */
  async totals(): Promise<{ cells: number; statusCounts: Record<string, number>; stale: number }> {
    const t = addCounts(emptyTally(), await this.store.cellCounts('environment'));
    return { cells: t.cells, statusCounts: t.statusCounts, stale: t.stale };
  }

  /** A page of `/api/sites`: ordered and paged by the store, each site summarised from its counts. */
  async sitesPage(
    q: SitesQuery,
    now: number,
  ): Promise<{ sites: SiteSummary[]; total: number; next: string | null }> {
    const limit = q.limit ?? SITES_PAGE_DEFAULT;
    const offset = decodeOffset(q.cursor);
    const page = await this.store.pageSites({
      sort: q.sort ?? 'site',
      offset,
      limit,
      ...(q.contains ? { contains: q.contains } : {}),
    });
    const sites = await this.siteSummaries(page.sites, now);
    const next = offset + page.sites.length < page.total ? encodeOffset(offset + page.sites.length) : null;
    return { sites, total: page.total, next };
  }

  /**
   * `GET /api/fleet`: totals, sites, environments and the worst cells first, from counts alone, with
   * "Needs attention" grouped by cause (`relays`: `/api/relays`' entries, for the relay rows).
   */
  async fleet(now: number, attentionCap: number, relays: readonly RelayInfo[] = []): Promise<FleetResponse> {
    const [rows, counted, components] = await Promise.all([
      siteBriefs(this.store),
      this.store.cellCounts('siteEnvironment'),
      this.store.cellCounts('component'),
    ]);
    const waived = await this.waived(now);
    const contacts = this.contacts(rows, now);
    const siteEnv = await this.counts(
      counted,
      contacts,
      (site) => rows.rows.get(site)?.lastContactAt ?? null,
      now,
      (c) => `${c.site}/${c.environment}`,
      waived,
    );
    const tallies = this.tallies(rows.names, siteEnv, await declaredBySite(this.store, rows));
    const summaries = this.summaries(rows, tallies, contacts, now);
    const sites: FleetSite[] = summaries.map((s) => {
      const t = tallies.get(s.site)?.total ?? emptyTally();
      const agents = rows.agents.get(s.site) ?? [];
      return {
        site: s.site,
        cells: t.cells,
        statusCounts: t.statusCounts,
        stale: t.stale,
        unreachable: s.unreachable,
        lastContactAt: s.lastContactAt,
        expectedContactIntervalS: s.expectedContactIntervalS,
        environments: [...(tallies.get(s.site)?.perEnv.keys() ?? [])].sort(byText),
        ...linkFacts(agents, rows.rows.get(s.site)?.upstream ?? null),
        link: linkState(s, t.withData),
        ...(s.contact ? { contact: s.contact } : {}),
        // The same tally the fleet's `attentionCounts` sums: the per-site columns agree with attention.
        attentionCounts: { ...t.kinds },
      };
    });
    const unreachable = new Set<string>(sites.filter((s) => s.unreachable).map((s) => s.site));
    const envs = new Map<string, { e: FleetEnvironment; t: Tally }>();
    for (const [site, t] of tallies)
      for (const [env, e] of t.perEnv) {
        const x = envs.get(env) ?? {
          e: { environment: env, cells: 0, statusCounts: {}, stale: 0, unreachable: 0, sites: [] },
          t: emptyTally(),
        };
        envs.set(env, x);
        addTally(x.t, e);
        if (unreachable.has(site)) x.e.unreachable += e.cells;
        if (e.cells > 0) x.e.sites.push(site);
      }
    for (const { e, t } of envs.values()) {
      e.cells = t.cells;
      e.statusCounts = t.statusCounts;
      e.stale = t.stale;
    }
    const totals = sumTallies([...tallies.values()].map((t) => t.total));
    const silentSites = sites.map(silentSite).filter((x): x is SilentSite => x !== null);
    // Stale cells of a silent site are its one row in `silentSites`, not one row each.
    const silent = new Set<string>(
      sites
        .filter((s) => s.unreachable || (s.contact?.judged && s.contact.state !== 'unplanned'))
        .map((s) => s.site),
    );
    // the grouping reads a kind's cells only where it has at most EXACT_KIND_CAP (else its counts)
    const kindCells = onceEachKind(
      (kind, limit) => this.attentionOf(kind, limit, waived),
      (kind) => ((totals.kinds[kind] ?? 0) <= EXACT_KIND_CAP ? EXACT_KIND_CAP : 0),
    );
    const attention = await this.attention(attentionCap, silent, unreachable, kindCells);
    const attentionCounts = Object.fromEntries(
      ATTENTION_KINDS.map((k) => [k, totals.kinds[k] ?? 0]),
    ) as Record<AttentionKind, number>;
    const grouped = groupAttention(
      {
        ...(await attentionInput(sites, relays, siteEnv, totals.kinds, silent, kindCells)),
        // upstreams sitting on custody, from the briefs already read (decision 575)
        custody: custodyHeld(
          [...rows.agents.values()].flat(),
          relays.map((r) => r.name),
        ),
      },
      now,
    );
    return {
      asOf: new Date(now).toISOString(),
      totals: {
        cells: totals.cells,
        statusCounts: totals.statusCounts,
        stale: totals.stale,
        sites: sites.length,
        unreachableSites: unreachable.size,
        unreachableCells: sites.filter((s) => s.unreachable).reduce((n, s) => n + s.cells, 0),
      },
      sites,
      environments: [...envs.values()].map((x) => x.e).sort((a, b) => byText(a.environment, b.environment)),
      components: [...new Set(components.map((c) => c.key))].sort(byText),
      attention,
      attentionCounts,
      silentSites,
      attentionGroups: grouped,
    };
  }

  /** The worst cells by kind, longest-standing first, each kind read from its index, up to `cap`. */
  private async attention(
    cap: number,
    silent: ReadonlySet<string>,
    unreachable: ReadonlySet<string>,
    kindCells: KindCells,
  ): Promise<AttentionItem[]> {
    const out: AttentionItem[] = [];
    for (const kind of ATTENTION_KINDS) {
      const room = cap - out.length;
      if (room <= 0) break;
      // Stale cells of silent sites are left out: read a bounded margin more.
      const margin = kind === 'stale' ? Math.min(room * 4, 5000) : room;
      let rows: CellRow[] = await kindCells(kind, margin);
      if (kind === 'stale') rows = rows.filter((c) => !silent.has(c.site));
      for (const c of rows.slice(0, room))
        out.push({
          kind,
          site: c.site as AttentionItem['site'],
          environment: c.environment,
          component: c.component,
          ref: c.ref ?? null,
          status: c.status,
          reason: c.reason ?? null,
          needs: c.needs ?? [],
          plannedAt: iso(c.plannedAt),
          receivedAt: iso(c.receivedAt),
          siteUnreachable: unreachable.has(c.site),
        });
    }
    return out;
  }
}

/** `/api/sites` cursors: the offset of the next page (sites are few; the order is the store's). */
export function encodeOffset(n: number): string {
  return `o${n}`;
}
export function decodeOffset(cursor: string | undefined): number {
  if (!cursor) return 0;
  const m = /^o(\d{1,9})$/.exec(cursor);
  return m ? Number(m[1]) : 0;
}
