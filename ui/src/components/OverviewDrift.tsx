import type { DriftGroupsResponse } from '@driftline/protocol';
import type { Route } from '../core/route.js';
import { linkProps } from '../hooks/useRoute.js';

/**
 * The overview's drift by signature (decision 421): the five signatures at the most cells, each with
 * its sites and cells, a link to its episodes in the Drift view. Nothing when there is no open episode.
 */
export function OverviewDrift({ data, go }: { data: DriftGroupsResponse; go: (r: Route) => void }) {
  if (data.groups.length === 0) return null;
  const { groups, totals } = data;
  return (
    <section aria-labelledby="ov-drift-title" class="ov-drift">
      <h2 id="ov-drift-title">
        Drift by signature{' '}
        <span class="muted small">
          ({totals.open} open, {totals.waived} waived)
        </span>
      </h2>
      <ol class="attention">
        {groups.slice(0, 5).map((g) => (
          <li key={g.signature}>
            <a {...linkProps({ view: 'drift', signature: g.signature }, go)}>
              <code>{g.signature}</code>
            </a>{' '}
            — {g.sites} site{g.sites === 1 ? '' : 's'}, {g.cells} cell{g.cells === 1 ? '' : 's'}
            {g.waived ? `, ${g.waived} waived` : ''}
          </li>
        ))}
      </ol>
      <p class="ov-more">
        <a {...linkProps({ view: 'drift' }, go)}>All drift</a>
      </p>
    </section>
  );
}
