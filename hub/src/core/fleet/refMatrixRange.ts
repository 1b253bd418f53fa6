import type { CellKey, CellRow, ReadStore } from '../../ports/HubStore.js';
import { MAX_REF_CELLS } from '../RefQueries.js';

/** The last key of a site: past every environment and component (names are ASCII slugs). */
const SITE_END = '\uffff';
/** A key as text: compared in code units, the key order (names hold no NUL). */
export const keyText = (c: CellKey): string => `${c.site}\u0000${c.environment}\u0000${c.component}`;
/** Code-unit key order, the cursor's (docs/decisions/640-ref-reads-whole-and-indexed.md). */
export const byKey = (a: CellKey, b: CellKey): number => {
  const x = keyText(a);
  const y = keyText(b);
  return x < y ? -1 : x > y ? 1 : 0;
};
export const sameKey = (a: CellKey, b: CellKey): boolean => byKey(a, b) === 0;
/** A cell's id as `RefQueries.noData` matches it. */
export const cellId = (c: CellKey): string => `${c.site}/${c.environment}/${c.component}`;

/**
 * Most sites one range reads the rows of: each is read by itself (`siteRows` reads a few sites one by
 * one, more as the whole fleet), so a range is bounded by the page, not by the fleet.
 */
const RANGE_SITES = 32;

/** What one page of a ref's matrix reads whole: its `@ref` cells (few) and the fleet's agent sites. */
export interface RefFleet {
  /** `@ref` cells of the ref, in key order. */
  atRef: CellRow[];
  /** Sites with an agent not revoked, in key order: only their agents' patterns add no-data. */
  sites: string[];
  /** Default cells the site's agents declare: how many cells a site may add, to size a range. */
  declared: Map<string, number>;
}

export async function refFleet(
  store: Pick<ReadStore, 'listRefCells' | 'listAgentBriefs'>,
  ref: string,
  site: string | undefined,
): Promise<RefFleet> {
  // The agents' briefs, not their patterns: every agent's patterns are ~200,000 keys at 1,000 × 200.
  const [atRef, briefs] = await Promise.all([
    store.listRefCells({ ref, ...(site ? { site } : {}), limit: MAX_REF_CELLS }),
    store.listAgentBriefs(),
  ]);
  const declared = new Map<string, number>();
  for (const a of briefs) {
    if ((site !== undefined && a.site !== site) || (a.revokedAt !== null && a.revokedAt !== undefined))
      continue;
    const n = Object.values(a.declared).reduce((x, y) => x + y, 0);
    declared.set(a.site, (declared.get(a.site) ?? 0) + n);
  }
  const sites = [...declared.keys()].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
  return { atRef: atRef.filter((c) => !site || c.site === site).sort(byKey), sites, declared };
}

/** One range of a ref's matrix after a key: every cell of the ref in it, and the sites that may add no-data. */
export interface RefRange {
  /** Default cells, then `@ref` cells, of the range (each in key order). */
  rows: CellRow[];
  /** Sites in the range whose agents' patterns may allow cells of the ref without a plan of it. */
  noDataSites: string[];
  /** Ids (`cellId`) of the ref's cells: no-data is added only at other keys. */
  have: Set<string>;
  /** Whether a key is in the range. */
  holds: (k: CellKey) => boolean;
  /** The range's last key; undefined when it runs to the end of the matrix. */
  end: CellKey | undefined;
}

/**
 * The range of a ref's matrix after `from` that about `chunk` cells fill, bounded by the page, not by
 * the fleet (decision 650): at most `chunk` default cells from the ref index, and the agents' sites that
 * declare at least `chunk` cells (at most {@link RANGE_SITES}); the range ends where the first of the two
 * does.
 */
export async function refRange(
  store: Pick<ReadStore, 'listCellsOfRef'>,
  fleet: RefFleet,
  ref: string,
  site: string | undefined,
  from: CellKey | undefined,
  chunk: number,
): Promise<RefRange> {
  const defaults = await store.listCellsOfRef({
    ref,
    ...(site ? { site } : {}),
    ...(from ? { after: from } : {}),
    limit: chunk,
  });
  const lastDefault = defaults.length >= chunk ? defaults.at(-1) : undefined;
  // Agents' sites from the cursor's: at least one past it, so each range moves on.
  let i = 0;
  while (from && i < fleet.sites.length && (fleet.sites[i] as string) < from.site) i++;
  const sites: string[] = [];
  let keys = 0;
  while (
    i < fleet.sites.length &&
    ((keys < chunk && sites.length < RANGE_SITES) || (from !== undefined && sites.at(-1) === from.site))
  ) {
    const s = fleet.sites[i++] as string;
    sites.push(s);
    keys += fleet.declared.get(s) ?? 0;
  }
  const lastSite = i < fleet.sites.length ? sites.at(-1) : undefined;
  const siteEnd = lastSite ? { site: lastSite, environment: SITE_END, component: SITE_END } : undefined;
  const end =
    lastDefault && siteEnd
      ? byKey(lastDefault, siteEnd) <= 0
        ? lastDefault
        : siteEnd
      : (lastDefault ?? siteEnd);
  const holds = (k: CellKey) => (!from || byKey(k, from) > 0) && (!end || byKey(k, end) <= 0);
  const have = new Set([...defaults, ...fleet.atRef].map(cellId));
  return {
    rows: [...defaults.filter(holds), ...fleet.atRef.filter(holds)],
    noDataSites: sites.filter((s) => !end || s <= end.site),
    have,
    holds,
    end,
  };
}
