import type { ApprovalJourney } from '@driftline/protocol';
import { approvalSteps } from '../core/journeySteps.js';
import type { Route } from '../core/route.js';
import { linkProps } from '../hooks/useRoute.js';
import { Journey } from './Journey.js';
import { RelTime } from './RelTime.js';

const STATE_TEXT: Record<ApprovalJourney['state'], string> = {
  submitted: 'waiting at the hub for the site to pull it',
  delivered: 'on its way to the agent',
  'waiting-quorum': 'received; waiting for more approvers',
  applying: 'applying',
  applied: 'applied',
  'apply-failed': 'apply failed',
  refused: 'refused by the agent',
};

/**
 * The approvals of one run, each with its journey and ages: approved → submitted → delivered → received
 * → applying → applied / failed / refused (the reason) → the cell's next plan.
 */
export function ApprovalJourneys({
  approvals,
  now,
  go,
}: {
  approvals: ApprovalJourney[];
  now: number;
  go: (r: Route) => void;
}) {
  if (approvals.length === 0) return null;
  return (
    <section aria-labelledby="approvals-title" class="approvals">
      <h2 id="approvals-title">Approvals</h2>
      {approvals.map((a) => {
        const end = a.state === 'applied' || a.state === 'apply-failed' || a.state === 'refused';
        return (
          <article key={a.approvalId} aria-label={`Approval ${a.approvalId}`} class="approval">
            <p>
              <strong>{a.approverName ?? 'unnamed approver'}</strong>{' '}
              <code class="small" title={a.approver}>
                {a.approver.slice(0, 20)}…
              </code>
              : <span class={`approval-state approval-${a.state}`}>{STATE_TEXT[a.state]}</span>
              {a.unconfirmed ? ' — unconfirmed: the agent has not said it arrived, sent again' : null}
              {a.reason ? (
                <>
                  {' '}
                  — <code>{a.reason}</code>
                </>
              ) : null}
            </p>
            <Journey steps={approvalSteps(a)} now={now}>
              {a.nextRunId ? (
                <li>
                  next plan <a {...linkProps({ view: 'run', runId: a.nextRunId }, go)}>{a.nextRunId}</a>
                </li>
              ) : null}
            </Journey>
            {!end ? (
              <p class="muted small">
                expires <RelTime iso={a.expiresAt} now={now} />
              </p>
            ) : null}
          </article>
        );
      })}
    </section>
  );
}
