import type { AttentionGroups, CustodyGroup } from '@driftline/protocol';
import { countOf } from '../core/plural.js';

/**
 * Under the Links table: each upstream the agents found sitting on their results past the path's
 * deadline, as the overview's attention names it (`relay-2 holds 13 results past their deadline, oldest
 * 14 min (site ship-1)`; issue 59, docs/decisions/575-custody-deadline-per-path.md). Nothing when none,
 * or from a hub that does not group attention.
 */
export function CustodyOverdue({ g }: { g: AttentionGroups | undefined }) {
  const rows = (g?.rows ?? []).filter((r): r is CustodyGroup => r.kind === 'custody-overdue');
  if (rows.length === 0) return null;
  const more = (g?.counts.custodyUpstreams ?? rows.length) - rows.length;
  return (
    <section aria-labelledby="custody-title">
      <h2 id="custody-title">Upstreams sitting on results</h2>
      <ul class="custody-overdue" aria-label="Upstreams sitting on results past their deadline">
        {rows.map((r) => (
          <li key={r.upstream} class="link-why">
            {r.text}
          </li>
        ))}
      </ul>
      {more > 0 ? <p class="muted small">{countOf(more, 'more upstream')} not shown</p> : null}
      <p class="muted small">
        As the sites' agents last reported: an upstream took custody of their results and the hub has not
        acknowledged them past that path's deadline. The agents send what it holds again by another upstream
        and pass it over until it delivers; see <code>edge-agent status</code> at the site.
      </p>
    </section>
  );
}
