import type { FleetResponse } from '@driftline/protocol';
import type { MatrixPart } from '../ports/Api.js';

/** What the view shows first, so that part of the matrix is read first. */
export interface FirstHints {
  environment: string | null;
  site: string | null;
  pivot: string | null;
  /** How many site columns fit on the screen. */
  visibleSites: number;
  /** A status filter: the server reads only those cells (decision 401), in one part. */
  status?: string | null;
}

/**
 * The order the matrix is read in: steps, each a few requests made together. First what is on screen
 * (the pivot's component, the filtered site, or the first environment at the sites in view, one window),
 * then every environment, the first one first. Cells read twice are kept once. With a status filter the
 * server reads only the cells of that status, in one part.
 */
export function planParts(fleet: FleetResponse, h: FirstHints): MatrixPart[][] {
  if (h.status) return [[{ status: h.status }]];
  const envs = fleet.environments.map((e) => e.environment);
  const firstEnv = h.environment && envs.includes(h.environment) ? h.environment : (envs[0] ?? null);
  if (!firstEnv) return [[{}]];
  let first: MatrixPart[];
  if (h.pivot) first = [{ component: h.pivot }];
  else if (h.site) first = [{ site: h.site }];
  else {
    const sites = fleet.environments.find((e) => e.environment === firstEnv)?.sites ?? [];
    // One window: the sites in view × the first environment.
    first = [{ environment: firstEnv, sites: sites.slice(0, Math.max(1, h.visibleSites)) }];
  }
  const rest = [firstEnv, ...envs.filter((e) => e !== firstEnv)].map((environment) => [{ environment }]);
  return [first, ...rest];
}
