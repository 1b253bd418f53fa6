import type { ApprovalJourney } from '@driftline/protocol';
import type { Route } from '../core/route.js';
import { linkProps } from '../hooks/useRoute.js';
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

function Step({ label, at, now }: { label: string; at: string | null; now: number }) {
  if (!at) return null;
  return (
    <li>
      {label} <RelTime iso={at} now={now} />
    </li>
  );
}

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
            <ol class="journey">
              <Step label="approved" at={a.approvedAt} now={now} />
              <Step label="submitted" at={a.submittedAt} now={now} />
              <Step label="delivered" at={a.deliveredAt} now={now} />
              <Step label="received by the agent" at={a.receivedAt} now={now} />
              <Step label="applying" at={a.startedAt} now={now} />
              {end ? (
                <Step label={a.state.replace('-', ' ')} at={a.finishedAt ?? a.receivedAt} now={now} />
              ) : null}
              {a.nextRunId ? (
                <li>
                  next plan <a {...linkProps({ view: 'run', runId: a.nextRunId }, go)}>{a.nextRunId}</a>
                </li>
              ) : null}
            </ol>
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
