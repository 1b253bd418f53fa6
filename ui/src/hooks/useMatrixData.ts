import type { MatrixCell, SiteSummary } from '@driftline/protocol';
import { useEffect, useState } from 'preact/hooks';
import { CellStore } from '../core/cellStore.js';
import { belongsToView } from '../core/matrix.js';
import { type FirstHints, planParts } from '../core/matrixParts.js';
import type { MatrixPart } from '../ports/Api.js';
import { useServices } from '../services.js';

/** Most pages one part is read in (5,000 cells each: a 1,000 × 200 fleet is 40). */
const MAX_PAGES = 100;

/** What a site row needs beside its cells: whether and since when it is unreachable. */
export type SiteFacts = Pick<SiteSummary, 'site' | 'lastContactAt' | 'unreachable' | 'contact'>;

export interface MatrixData {
  store: CellStore;
  /** Bumps on every change of a cell (re-render the visible tiles). */
  version: number;
  /** Bumps when cells were added (lay the matrix out again). */
  layoutVersion: number;
  sites: Map<string, SiteFacts>;
  /** Parts read so far and in all; `done === total` once the whole matrix is here. */
  progress: { done: number; total: number };
  error: string | null;
}

/**
 * The matrix for one view, read in parts so the first paint does not wait for all of it: the fleet
 * summary names the environments and sites, what is on screen is read first (`planParts`), then every
 * environment one by one.
 * A point in time or a ref is read in one request. Live cell updates apply from the start (a fetched part
 * never overwrites a newer live fact), except for a point in time, which is a fixed picture.
 */
export function useMatrixData(at: string | null, ref: string | null, first: FirstHints): MatrixData {
  const { api, live } = useServices();
  const [data, setData] = useState<MatrixData>(() => empty());
  useEffect(() => {
    const store = new CellStore();
    const sites = new Map<string, SiteFacts>();
    let cancelled = false;
    let progress = { done: 0, total: 1 };
    const publish = (error: string | null = null) => {
      if (cancelled) return;
      setData({
        store,
        version: store.version,
        layoutVersion: store.layoutVersion,
        sites: new Map(sites),
        progress,
        error,
      });
    };
    setData(empty(store));
    const off = at
      ? () => {}
      : live.subscribe((e) => {
          if (e.type === 'cell-updated') {
            if (!belongsToView(e.cell, ref, store)) return;
            store.upsert(e.cell);
            publish();
          } else if (e.type === 'site-updated') {
            sites.set(e.site.site, e.site);
            publish();
          }
        });
    (async () => {
      let parts: MatrixPart[][] = [[{ at, ref }]];
      if (!at && !ref) {
        const fleet = await api.fleet().catch(() => null);
        if (fleet) {
          for (const s of fleet.sites) if (!sites.has(s.site)) sites.set(s.site, s);
          parts = planParts(fleet, first);
        }
      }
      if (sites.size === 0) {
        const s = await api.sites().catch(() => null);
        for (const x of s?.sites ?? []) sites.set(x.site, x);
      }
      progress = { done: 0, total: parts.length };
      for (const step of parts) {
        // Each part is paged by the hub: follow its cursor until the part is whole.
        const got = await Promise.all(
          step.map(async (part) => {
            const cells: MatrixCell[] = [];
            let m = await api.matrix(part);
            cells.push(...(m.cells as MatrixCell[]));
            for (let pages = 1; m.next && pages < MAX_PAGES && !cancelled; pages++) {
              m = await api.matrix({ ...part, cursor: m.next });
              cells.push(...(m.cells as MatrixCell[]));
            }
            return cells;
          }),
        );
        if (cancelled) return;
        for (const cells of got) store.addAll(cells);
        progress = { done: progress.done + 1, total: parts.length };
        publish();
        // Let the browser paint (and answer the keyboard) before the next part is read and laid out.
        await afterPaint();
      }
    })().catch((e: Error) => publish(e.message));
    return () => {
      cancelled = true;
      off();
    };
  }, [api, live, at, ref, first.status ?? null]);
  return data;
}

/**
 * Resolves after the next frame has been painted, or after 100 ms where no frame comes (a hidden tab
 * paints nothing, and must still read the whole matrix).
 */
function afterPaint(): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, 100);
    if (typeof requestAnimationFrame === 'function')
      requestAnimationFrame(() =>
        setTimeout(() => {
          clearTimeout(timer);
          resolve();
        }, 0),
      );
  });
}

function empty(store = new CellStore()): MatrixData {
  return {
    store,
    version: 0,
    layoutVersion: 0,
    sites: new Map(),
    progress: { done: 0, total: 1 },
    error: null,
  };
}
