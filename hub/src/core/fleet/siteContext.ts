import type { FleetSite, SiteContact, SiteSummary } from '@driftline/protocol';
import type { AgentBrief, AgentFacts, AgentRow, ReadStore, SiteRow } from '../../ports/HubStore.js';
import { toSiteSummaryCounted, type ViewContext } from '../views.js';
import type { Tally } from './counted.js';

const iso = (t: number | null) => (t === null ? null : new Date(t).toISOString());

/** Site and agent rows of some sites (or all), never their cells. */
export interface SiteRows<A extends AgentFacts = AgentRow> {
  names: string[];
  rows: Map<string, SiteRow>;
  agents: Map<string, A[]>;
}

export const emptySiteRow = (site: string): SiteRow => ({
  site,
  lastContactAt: null,
  upstream: null,
  unreachableNotifiedFor: null,
});

/**
 * Past this many named sites, their rows come from two fleet-wide reads (sites, agents) filtered here,
 * not two reads a site: a drift page names up to ~1,000 sites, and on PostgreSQL each read is a round
 * trip (fleetScale, 2026-11-29: `status=drift` p95 416 ms against an environment's page's 140).
 */
const SITE_ROWS_ONE_BY_ONE = 32;

/** The rows of `names`, or of every site (those with a row or enrolled agents), sorted by name. */
export async function siteRows(
  store: Pick<ReadStore, 'getSite' | 'listSites' | 'listAgents'>,
  names?: readonly string[],
): Promise<SiteRows> {
  const rows = new Map<string, SiteRow>();
  const agents = new Map<string, AgentRow[]>();
  const oneByOne = names !== undefined && names.length <= SITE_ROWS_ONE_BY_ONE;
  const [r, a] = oneByOne
    ? await Promise.all([
        Promise.all(names.map((n) => store.getSite(n))),
        Promise.all(names.map((n) => store.listAgents(n))).then((l) => l.flat()),
      ])
    : await Promise.all([store.listSites(), store.listAgents()]);
  const wanted = names && new Set(names);
  for (const x of r) if (x && (!wanted || wanted.has(x.site))) rows.set(x.site, x);
  for (const x of a) {
    if (wanted && !wanted.has(x.site)) continue;
    const list = agents.get(x.site);
    if (list) list.push(x);
    else agents.set(x.site, [x]);
  }
  if (names) return { names: [...names], rows, agents };
  const all = [...new Set([...rows.keys(), ...agents.keys()])].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
  return { names: all, rows, agents };
}

/**
 * The rows of `names` with their agents' facts only: past {@link SITE_ROWS_ONE_BY_ONE} sites, from the
 * fleet's site rows and agent briefs (`listAgentBriefs`), never parsing any agent's cadence (a drift page
 * names up to ~1,000 sites; every agent's whole row was most of its time, decision 565).
 */
export async function siteFacts(
  store: Pick<ReadStore, 'getSite' | 'listSites' | 'listAgents' | 'listAgentBriefs'>,
  names: readonly string[],
): Promise<SiteRows<AgentFacts>> {
  if (names.length <= SITE_ROWS_ONE_BY_ONE) return siteRows(store, names);
  const wanted = new Set(names);
  const [r, a] = await Promise.all([store.listSites(), store.listAgentBriefs()]);
  const rows = new Map<string, SiteRow>();
  const agents = new Map<string, AgentFacts[]>();
  for (const x of r) if (wanted.has(x.site)) rows.set(x.site, x);
  for (const x of a) {
    if (!wanted.has(x.site)) continue;
    const list = agents.get(x.site);
    if (list) list.push(x);
    else agents.set(x.site, [x]);
  }
  return { names: [...names], rows, agents };
}

/**
 * Every site's row and its agents' briefs (`listAgentBriefs`), sorted by name: what `/api/fleet` reads
 * of sites, without parsing any agent's cadence (docs/decisions/465-agent-briefs.md).
 */
export async function siteBriefs(
  store: Pick<ReadStore, 'listSites' | 'listAgentBriefs'>,
): Promise<SiteRows<AgentBrief>> {
  const rows = new Map<string, SiteRow>();
  const agents = new Map<string, AgentBrief[]>();
  const [r, a] = await Promise.all([store.listSites(), store.listAgentBriefs()]);
  for (const x of r) rows.set(x.site, x);
  for (const x of a) {
    const list = agents.get(x.site);
    if (list) list.push(x);
    else agents.set(x.site, [x]);
  }
  const all = [...new Set([...rows.keys(), ...agents.keys()])].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
  return { names: all, rows, agents };
}

/**
 * `declaredByEnvironment` of every site from briefs: a site of one agent takes its brief's counts; a
 * site of several reads its agents' rows, since keys two agents both declare count once.
 */
export async function declaredBySite(
  store: Pick<ReadStore, 'listAgents'>,
  briefs: SiteRows<AgentBrief>,
): Promise<Map<string, Map<string, number>>> {
  const out = new Map<string, Map<string, number>>();
  const shared: string[] = [];
  for (const [site, list] of briefs.agents) {
    if (list.length === 1) out.set(site, new Map(Object.entries((list[0] as AgentBrief).declared)));
    else shared.push(site);
  }
  const full = await Promise.all(shared.map((site) => store.listAgents(site)));
  for (const [i, site] of shared.entries()) out.set(site, declaredByEnvironment(full[i] ?? []));
  return out;
}

/**
 * How many default cells (`environment/component`) the site's agents declared a cadence for, by
 * environment: the cells the matrix shows as `no-data` until planned. Keys two agents both declare
 * count once.
 */
export function declaredByEnvironment(agents: readonly AgentRow[]): Map<string, number> {
  const out = new Map<string, number>();
  const keys =
    agents.length === 1
      ? Object.keys(agents[0]?.cadenceS ?? {})
      : [...new Set(agents.flatMap((a) => Object.keys(a.cadenceS)))];
  for (const key of keys) {
    const slash = key.indexOf('/');
    if (slash <= 0 || slash === key.length - 1 || key.includes('@')) continue;
    const env = key.slice(0, slash);
    out.set(env, (out.get(env) ?? 0) + 1);
  }
  return out;
}

/** Judges a site: its summary from counts, with its contact plan when it has one. */
export function judgedSummary(
  row: SiteRow,
  agents: readonly AgentFacts[],
  tally: Tally,
  ctx: ViewContext,
  /** The site's contact judgement (`ContactPlans.of`), or null where no plan judges silence. */
  contact: SiteContact | null,
): SiteSummary {
  const base = { ...toSiteSummaryCounted(row, agents, tally, ctx), attentionCounts: { ...tally.kinds } };
  if (!contact) return base;
  return { ...base, ...(contact.judged ? { unreachable: contact.state === 'unreachable' } : {}), contact };
}

/** Link facts of one site from its agents' last reports (revoked agents left out). */
export function linkFacts(
  agents: readonly AgentFacts[],
  upstream: string | null,
): Pick<
  FleetSite,
  'agents' | 'agentsHeardFrom' | 'queueDepth' | 'oldestUnsentAt' | 'upstream' | 'contactWindows'
> {
  const live = agents.filter((a) => a.revokedAt === null);
  const depths = live.map((a) => a.queueDepth).filter((x): x is number => x !== null);
  const unsent = live.map((a) => a.oldestUnsentAt).filter((x): x is number => x !== null);
  return {
    agents: live.length,
    agentsHeardFrom: live.filter((a) => a.lastContactAt !== null).length,
    queueDepth: depths.length ? depths.reduce((s, x) => s + x, 0) : null,
    oldestUnsentAt: iso(unsent.length ? Math.min(...unsent) : null),
    upstream,
    contactWindows: [...new Set(live.flatMap((a) => a.contactWindows))],
  };
}
