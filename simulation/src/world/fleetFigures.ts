import { RELAY, WORLD_START, type World } from './World.js';

/** Ages are looked at this often over the days (read afterwards from what the hub committed: no timer of its own). */
const SAMPLE_MS = 5 * 60_000;

/** p50, p95 and the largest of some figures, ms (nearest rank). */
export interface Spread {
  p50: number;
  p95: number;
  max: number;
}

/** What the hub knew of one site over the days (docs/decisions/540-deterministic-world.md). */
export interface SiteAges {
  site: string;
  /** Cells (component/environment) of the site the hub holds by the end of the days. */
  cells: number;
  /** From the world's start until the hub held a plan of every cell of the site, ms; null: not by the end of the days. */
  allCellsAtHubMs: number | null;
  /**
   * The age of the site's oldest fact at the hub (now − the plan time of its least recent cell), looked at
   * every 5 min of world time from `allCellsAtHubMs` to the end of the days; null: no such look.
   */
  ageMs: Spread | null;
  /** That age at the end of the days, ms. */
  ageAtEndMs: number | null;
}

/** Bytes one link carried over the days (not the drain), per day of them: requests up, answers down. */
export interface LinkBytes {
  link: string;
  upPerDay: number;
  downPerDay: number;
}

export interface FleetFigures {
  sites: SiteAges[];
  /** Over the sites: their ages' p95s, and their largest ages (null: no site had every cell at the hub). */
  fleet: {
    sitesWithEveryCell: number;
    ageP95: Spread | null;
    ageMax: Spread | null;
    ageAtEnd: Spread | null;
  };
  links: LinkBytes[];
}

/**
 * Watches what the hub commits of each cell (its plan time, corrected to the hub's clock) and the bytes
 * each link carried by the end of the days: the ages and bytes an operator reads off a topology run. Only
 * observes: a world's digest is the same watched or not.
 */
export class FleetWatch {
  /** site → cell → [arrival at the hub, plan time] in commit order. */
  private readonly cells = new Map<string, Map<string, Array<[number, number]>>>();
  private bytes: LinkBytes[] = [];

  constructor(private readonly world: World) {
    world.hubCommits.add((c) => {
      const at = Date.now();
      for (const cell of c.cells) {
        const site = this.cells.get(cell.site) ?? new Map<string, Array<[number, number]>>();
        this.cells.set(cell.site, site);
        const key = `${cell.component}/${cell.environment}${cell.ref ? `@${cell.ref}` : ''}`;
        const list = site.get(key) ?? [];
        site.set(key, list);
        list.push([at, cell.plannedAt]);
      }
    });
  }

  /** The bytes so far, per day of `days` (call at the end of the days, before the drain). */
  endOfDays(days: number): void {
    const links = [
      ...this.world.sites.map((s) => s.link),
      ...[this.world.net.link(RELAY, 'hub')].filter((l) => l !== undefined),
    ];
    this.bytes = links.map((l) => ({
      link: l.name,
      upPerDay: Math.round(l.bytes.up / days),
      downPerDay: Math.round(l.bytes.down / days),
    }));
  }

  figures(end: number): FleetFigures {
    const sites = this.world.sites.map((s) => this.siteAges(s.name, end));
    const withAll = sites.filter((s) => s.ageMs !== null);
    const over = (f: (s: SiteAges) => number | null) => {
      const v = sites.map(f).filter((x): x is number => x !== null);
      return v.length > 0 ? spread(v) : null;
    };
    return {
      sites,
      fleet: {
        sitesWithEveryCell: withAll.length,
        ageP95: over((s) => s.ageMs?.p95 ?? null),
        ageMax: over((s) => s.ageMs?.max ?? null),
        ageAtEnd: over((s) => s.ageAtEndMs),
      },
      links: this.bytes,
    };
  }

  private siteAges(site: string, end: number): SiteAges {
    const cells = [...(this.cells.get(site)?.values() ?? [])]
      .map((l) => l.filter(([at]) => at <= end))
      .filter((l) => l.length > 0);
    const none = { site, cells: cells.length, allCellsAtHubMs: null, ageMs: null, ageAtEndMs: null };
    const expected =
      this.world.spec.siteSpecs?.find((s) => s.name === site)?.components ?? this.world.spec.components ?? 2;
    if (cells.length < expected) return none;
    const from = Math.max(...cells.map((l) => (l[0] as [number, number])[0]));
    // each cell's latest plan time known at t: a pointer per cell, moved as t moves
    const at = cells.map(() => 0);
    const planned = cells.map(() => Number.NEGATIVE_INFINITY);
    const ageAt = (t: number) => {
      cells.forEach((l, i) => {
        let k = at[i] as number;
        while (k < l.length && (l[k] as [number, number])[0] <= t) {
          planned[i] = Math.max(planned[i] as number, (l[k] as [number, number])[1]);
          k++;
        }
        at[i] = k;
      });
      return Math.max(0, t - Math.min(...planned));
    };
    const ages: number[] = [];
    for (let t = from; t <= end; t += SAMPLE_MS) ages.push(ageAt(t));
    const ageAtEndMs = ageAt(end);
    return {
      site,
      cells: cells.length,
      allCellsAtHubMs: from - WORLD_START,
      ageMs: spread([...ages, ageAtEndMs]),
      ageAtEndMs,
    };
  }
}

export function spread(values: readonly number[]): Spread {
  const v = [...values].sort((a, b) => a - b);
  const rank = (p: number) => v[Math.min(v.length - 1, Math.max(0, Math.ceil(p * v.length) - 1))] as number;
  return { p50: rank(0.5), p95: rank(0.95), max: v[v.length - 1] as number };
}
