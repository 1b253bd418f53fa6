import { plainDocValue } from '@driftline/protocol';
import { toDocValue } from './docValues.js';

/**
 * Stamping a plan request with the run the agent started for it (docs/decisions/300-delivery-the-agent-
 * confirms.md). A request the agent accepted is answered by the first plan of its cell (its ref, its
 * commit when it named one) that started at or after the agent received it: the run the request
 * triggered, or a scheduled run of the cell still waiting when it arrived (the scheduler folds the two
 * into one). A plan already under way when the request arrived answers nothing, even when it finishes
 * after it with the same result. The hub counts the request `done` by this stamp.
 */

/** A request the agent accepted and has not answered yet, as the document holds it. */
export interface OpenRequest {
  requestId: string;
  environment: string;
  component: string;
  ref?: string;
  commit?: string;
  receivedAt: number;
  /** When the agent said the plan that answers it started (decision 560), if it has. */
  startedAt?: number;
}

/** Requests read per recording: an epoch holds far fewer (a request is written once per id). */
const MAX_OPEN = 1000;

/** The accepted requests of the document not stamped yet (at most MAX_OPEN). */
export function openRequests(requests: Record<string, unknown> | undefined): OpenRequest[] {
  if (!requests) return [];
  const out: OpenRequest[] = [];
  for (const [requestId, raw] of Object.entries(requests)) {
    const e = plainDocValue(raw) as Partial<OpenRequest> & { state?: string; runId?: string };
    if (e.state !== 'accepted' || e.runId !== undefined || typeof e.receivedAt !== 'number') continue;
    out.push({
      requestId,
      environment: String(e.environment),
      component: String(e.component),
      receivedAt: e.receivedAt,
      ...(e.ref ? { ref: e.ref } : {}),
      ...(e.commit ? { commit: e.commit } : {}),
      ...(typeof e.startedAt === 'number' ? { startedAt: e.startedAt } : {}),
    });
    if (out.length >= MAX_OPEN) break;
  }
  return out;
}

/** What a recorded plan offers as an answer. */
export interface PlanDone {
  environment: string;
  component: string;
  /** The cell's ref when it is not the component's default. */
  cellRef?: string;
  /** The ref and commit planned. */
  ref?: string;
  commit?: string;
  startedAt: number;
  finishedAt: number;
  /** The run the cell shows after it: this run, or for a plan found unchanged the run it confirms. */
  runId: string;
}

/** Whether `plan` answers `req`: the hub's rule (`answersRequest`), with the start after the receipt. */
export function answers(
  req: OpenRequest,
  plan: Pick<PlanDone, 'environment' | 'component' | 'cellRef' | 'ref' | 'commit' | 'startedAt'>,
): boolean {
  if (req.environment !== plan.environment || req.component !== plan.component) return false;
  if (plan.startedAt < req.receivedAt) return false;
  const refOk = req.ref ? (plan.ref ?? plan.cellRef) === req.ref : !plan.cellRef;
  return refOk && (!req.commit || !plan.commit || plan.commit === req.commit);
}

/**
 * Inside a document change: stamps each open request `plan` answers with its run and finish time;
 * removes them from `open` (a request is answered once). Returns the request ids stamped.
 */
export function stampRequests(
  d: { requests?: Record<string, unknown> },
  open: OpenRequest[],
  plan: PlanDone,
): string[] {
  const stamped: string[] = [];
  for (let i = open.length - 1; i >= 0; i--) {
    const req = open[i] as OpenRequest;
    if (!answers(req, plan)) continue;
    const entry = d.requests?.[req.requestId] as Record<string, unknown> | undefined;
    if (!entry) continue;
    entry.runId = toDocValue(plan.runId);
    entry.answeredAt = plan.finishedAt;
    open.splice(i, 1);
    stamped.push(req.requestId);
  }
  return stamped;
}

/** A plan of a cell as it starts: what the scheduler asked for (its ref other than the default, its commit). */
export interface PlanStart {
  environment: string;
  component: string;
  cellRef?: string;
  commit?: string;
  startedAt: number;
}

/**
 * Inside a document change: writes `startedAt` on each open request the plan starting now will answer
 * (docs/decisions/560-plan-request-states.md), once per request, so the hub shows it running. The rule
 * is `answers`, except that a request naming a commit starts only with a plan of that commit (a plan
 * whose commit is not known yet might turn out another). Returns the request ids written.
 */
export function stampStarts(
  d: { requests?: Record<string, unknown> },
  open: readonly OpenRequest[],
  plan: PlanStart,
): string[] {
  const started: string[] = [];
  for (const req of open) {
    if (req.startedAt !== undefined || (req.commit && req.commit !== plan.commit) || !answers(req, plan))
      continue;
    const entry = d.requests?.[req.requestId] as Record<string, unknown> | undefined;
    if (!entry) continue;
    entry.startedAt = plan.startedAt;
    started.push(req.requestId);
  }
  return started;
}
