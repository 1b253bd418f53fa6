import { refMatches, refNameProblem } from '@driftline/protocol';
import type { CellRef } from '../schedule/CellScheduler.js';
import type { ComponentSettings, PlanSettings } from '../settings.js';

/**
 * Whether the local config lets (environment, component) be planned at `ref`: the cell is listed and,
 * for a ref, the component's code comes from a repository whose `source.refs` match it (S3 in docs/architecture.md#invariants).
 */
export function allowsRef(
  config: Pick<PlanSettings, 'components'>,
  environment: string,
  component: string,
  ref?: string,
): boolean {
  const c = config.components.find((x) => x.name === component);
  if (!c?.environments.some((e) => e.name === environment)) return false;
  if (ref === undefined) return true;
  if (!c.source || refNameProblem(ref)) return false;
  return c.source.refs.some((p) => refMatches(p, ref));
}

/** The cell's ref key: undefined for the component's default ref (its cell is `environment/component`). */
export function cellRefOf(c: ComponentSettings | undefined, ref: string | undefined): string | undefined {
  if (!ref || !c?.source || ref === c.source.refs[0]) return undefined;
  return ref;
}

/** Ref patterns per cell key, for the agent's facts (the hub learns which cells a ref touches). */
export function refFacts(config: Pick<PlanSettings, 'components'>): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const c of config.components)
    if (c.source) for (const e of c.environments) out[`${e.name}/${c.name}`] = [...c.source.refs];
  return out;
}

/** The cells to plan when a repository's refs moved: every (component, environment) whose refs match. */
export function cellsForNewHeads(
  config: Pick<PlanSettings, 'components'>,
  repo: string,
  updated: Record<string, string>,
): CellRef[] {
  const out: CellRef[] = [];
  for (const c of config.components) {
    if (c.source?.repo !== repo) continue;
    for (const [ref, commit] of Object.entries(updated)) {
      if (!c.source.refs.some((p) => refMatches(p, ref))) continue;
      const cellRef = cellRefOf(c, ref);
      for (const e of c.environments)
        out.push({ component: c.name, environment: e.name, ...(cellRef ? { ref: cellRef } : {}), commit });
    }
  }
  return out;
}
