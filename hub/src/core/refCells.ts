import { DEFAULT_REF, refNameProblem } from '@driftline/protocol';
import type { CellRow, PlanRequestRow, ReadStore } from '../ports/HubStore.js';

/**
 * How plans of refs map onto cells. An agent keys the cell of a component's default ref
 * `environment/component` (as before refs) and any other ref's cell `environment/component@ref`; the
 * hub keeps the latter apart (`atRef`), so the main matrix stays the default refs' plans.
 */

/**
 * A document cell key split into the default-cell key and its `@ref` (null for a default cell);
 * null when the part after `@` is not a ref name.
 */
export function splitCellKey(key: string): { base: string; atRef: string | null } | null {
  const at = key.lastIndexOf('@');
  if (at < 0) return { base: key, atRef: null };
  const ref = key.slice(at + 1);
  return refNameProblem(ref) ? null : { base: key.slice(0, at), atRef: ref };
}

/** The first entry of a cell's ref patterns is its default ref, when it is a plain name. */
export function defaultRefOf(patterns: readonly unknown[] | undefined): string | null {
  const first = patterns?.[0];
  return typeof first === 'string' && !first.includes('*') ? first : null;
}

interface RunLike {
  runId?: unknown;
  environment?: unknown;
  component?: unknown;
  ref?: unknown;
  summary?: { ref?: unknown };
}

/**
 * Which cell a run of the document belongs to: the `@ref` of that cell, or null for the default cell.
 * A cell of the same segment that shows the run decides; else the run's ref against the cell's default
 * ref (the first of the agent's ref patterns for it, else `main`).
 */
export class RunCells {
  private byRun: Map<string, string | null> | null = null;
  private refs: Record<string, unknown> | undefined | null = null;

  constructor(
    private readonly doc: { entry(top: 'cells', key: string): unknown; facts(): unknown },
    private readonly cellKeys: Iterable<string>,
  ) {}

  /** The ref a run planned (null: a component without a repository). */
  static refOf(r: RunLike): string | null {
    const ref = r.ref ?? r.summary?.ref;
    return typeof ref === 'string' ? ref : null;
  }

  atRef(r: RunLike): string | null {
    const ref = RunCells.refOf(r);
    if (ref === null) return null;
    if (!this.byRun) {
      this.byRun = new Map();
      for (const key of this.cellKeys) {
        const split = splitCellKey(key);
        const c = this.doc.entry('cells', key) as { runId?: unknown } | undefined;
        if (split && typeof c?.runId === 'string') this.byRun.set(c.runId, split.atRef);
      }
    }
    const shown = typeof r.runId === 'string' ? this.byRun.get(r.runId) : undefined;
    if (shown !== undefined) return shown;
    if (this.refs === null) {
      const facts = this.doc.facts() as { refs?: unknown } | undefined;
      this.refs =
        facts?.refs && typeof facts.refs === 'object' ? (facts.refs as Record<string, unknown>) : undefined;
    }
    const patterns = this.refs?.[`${String(r.environment)}/${String(r.component)}`];
    const fallback = defaultRefOf(Array.isArray(patterns) ? patterns : undefined) ?? DEFAULT_REF;
    return ref === fallback ? null : ref;
  }
}

/** What a run (or a cell's confirmation) says, for answering plan requests. */
export interface PlanAnswer {
  environment: string;
  component: string;
  /** When the plan started (a run) or was confirmed (a cell), hub time. */
  at: number;
  ref?: string | null;
  atRef?: string | null;
  commit?: string | null;
}

/**
 * Whether a plan answers a request: the same cell, started after the request, of the ref asked for
 * (a request without a ref: the default cell's plan) and, when both name a commit, of that commit.
 */
export function answersRequest(req: PlanRequestRow, a: PlanAnswer): boolean {
  if (req.environment !== a.environment || req.component !== a.component || a.at < req.requestedAt)
    return false;
  const refOk = req.ref ? (a.ref ?? a.atRef) === req.ref : !a.atRef;
  return refOk && (!req.commit || !a.commit || a.commit === req.commit);
}

/** A site's cell: the default one, or with `ref` its `environment/component@ref` cell. */
export function readCell(
  store: Pick<ReadStore, 'getCell' | 'getRefCell'>,
  site: string,
  environment: string,
  component: string,
  ref?: string | null,
): Promise<CellRow | null> {
  return ref
    ? store.getRefCell(site, environment, component, ref)
    : store.getCell(site, environment, component);
}
