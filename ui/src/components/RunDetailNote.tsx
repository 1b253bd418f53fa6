import type { PlanSummary, RunDetail, RunDetailState } from '@driftline/protocol';
import { maskedTitle } from '../core/masked.js';
import { countsSentence } from '../core/status.js';

/** The detail state of a run, also from a hub that only says `detailAvailable`. */
export function detailStateOf(r: Pick<RunDetail, 'detailAvailable' | 'detailState'>): RunDetailState {
  return r.detailState ?? (r.detailAvailable ? 'arrived' : 'pending');
}

const WHY: Record<Exclude<RunDetailState, 'arrived'>, string> = {
  pending:
    'The per-resource detail has not arrived from the site yet. Transfer: pending — it travels after the summary, at lower priority, and is still at the site or on its way through the relays.',
  unreadable:
    "The per-resource detail reached the hub but could not be read (over the hub's size cap, or not a plan detail).",
  none: 'This run has no per-resource detail: the plan did not produce one.',
};

/**
 * What is known of a run whose per-resource detail is not here: its state and what the summary says
 * (counts, drift, outputs, any addresses it names). Shown instead of resource tables, which would read
 * as "no changes" when they are only not known yet.
 */
export function RunDetailNote({
  state,
  summary,
  unchanged,
  pending,
}: {
  state: Exclude<RunDetailState, 'arrived'>;
  summary: PlanSummary;
  /** The run found the same plan as the cell's previous run: its detail is that run's. */
  unchanged: boolean;
  /** Where the agent says the pending detail is (`detail: pending at … (uploaded to … at …, no receipt yet)`). */
  pending?: RunDetail['detailPending'];
}) {
  const c = summary.counts;
  const why =
    state === 'none' && unchanged
      ? "This run found the same plan as the cell's previous run, so no detail of its own was sent: the earlier run in the cell's history shows the resources."
      : WHY[state];
  const named = summary.resources ?? [];
  return (
    <section class="detail-pending" aria-labelledby="detail-title">
      <h2 id="detail-title">Resources</h2>
      <p class="banner" role="note" data-detail-state={state}>
        {why}
      </p>
      {state === 'pending' && pending ? <p data-detail-pending>{pending.text}</p> : null}
      {c ? (
        <>
          <p>
            Known from the summary: <strong>{countsSentence(c)}</strong>
            {c.drift > 0 ? `; ${c.drift} changed outside Terraform (drift)` : ''}.
          </p>
          {state === 'pending' ? (
            <p class="muted">
              Which resources, their actions and changed attribute names arrive with the detail.
            </p>
          ) : null}
        </>
      ) : null}
      {named.length > 0 ? (
        <>
          <h3>Addresses the summary names</h3>
          <ul>
            {named.map((r) => (
              <li key={`${r.drift}/${r.address}`}>
                <code title={maskedTitle(r.address)}>{r.address}</code> {r.drift ? '(drift) ' : ''}
                <span class="muted small">{r.actions.join(', ')}</span>
              </li>
            ))}
          </ul>
        </>
      ) : null}
    </section>
  );
}
