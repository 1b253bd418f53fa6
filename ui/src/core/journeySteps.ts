import type { ApprovalJourney, PlanRequest } from '@driftline/protocol';

/** One step of a journey (`Journey`): what happened, and when (ISO), or null while it has not. */
export interface JourneyStep {
  label: string;
  at: string | null;
}

/**
 * A plan request's steps (docs/decisions/560-plan-request-states.md): asked → at the relay (the relay
 * the hub handed it to) → delivered → running → done, or how it ended instead: expired, refused by the
 * agent (when its word came: `deliveredAt`).
 */
export function planRequestSteps(req: PlanRequest): JourneyStep[] {
  const steps: JourneyStep[] = [
    { label: 'asked', at: req.requestedAt },
    { label: `at ${req.relay ?? 'the relay'}`, at: req.relayAt ?? null },
  ];
  if (req.state === 'refused') return [...steps, { label: 'refused by the agent', at: req.deliveredAt }];
  steps.push({ label: 'delivered', at: req.deliveredAt }, { label: 'running', at: req.startedAt ?? null });
  if (req.state === 'done') steps.push({ label: 'done', at: req.doneAt });
  if (req.state === 'expired') steps.push({ label: 'expired', at: req.expiresAt });
  return steps;
}

/** An approval's steps: approved → submitted → delivered → received → applying → how it ended. */
export function approvalSteps(a: ApprovalJourney): JourneyStep[] {
  const end = a.state === 'applied' || a.state === 'apply-failed' || a.state === 'refused';
  return [
    { label: 'approved', at: a.approvedAt },
    { label: 'submitted', at: a.submittedAt },
    { label: 'delivered', at: a.deliveredAt },
    { label: 'received by the agent', at: a.receivedAt },
    { label: 'applying', at: a.startedAt },
    ...(end ? [{ label: a.state.replace('-', ' '), at: a.finishedAt ?? a.receivedAt }] : []),
  ];
}
