import type { MatrixCell } from '@driftline/protocol';
import { contactText } from '../core/contact.js';
import { isStale } from '../core/stale.js';
import { formatLag } from '../core/time.js';
import { RelTime } from './RelTime.js';
import { StatusBadge } from './StatusBadge.js';

/** What one matrix cell says: status, age, transit lag, and the stale / unreachable marks. */
export function CellBody({
  cell,
  now,
  unreachableSince,
}: {
  cell: MatrixCell;
  now: number;
  unreachableSince: string | null;
}) {
  const stale = isStale(cell, now);
  const contact = contactText(cell, now);
  return (
    <div class={`cell-body${stale ? ' is-stale' : ''}${cell.siteUnreachable ? ' is-unreachable' : ''}`}>
      {cell.siteUnreachable ? (
        <span class="mark mark-unreachable">
          last known — site unreachable
          {unreachableSince ? (
            <>
              {' '}
              since <RelTime iso={unreachableSince} now={now} />
            </>
          ) : null}
        </span>
      ) : null}
      {contact ? <span class={`mark mark-${cell.contact}`}>{contact}</span> : null}
      <StatusBadge status={cell.status} counts={cell.counts} reason={cell.reason} />
      {cell.diagnostic ? <span class="diagnostic">{cell.diagnostic}</span> : null}
      {cell.plannedAt ? (
        <span class="age">
          planned <RelTime iso={cell.plannedAt} now={now} />
        </span>
      ) : null}
      {cell.plannedAt && cell.receivedAt ? (
        <span class="lag">{formatLag(cell.plannedAt, cell.receivedAt)}</span>
      ) : null}
      {stale ? (
        <span class="mark mark-stale" title="older than twice the expected interval">
          <span aria-hidden="true">◔</span> stale
        </span>
      ) : null}
    </div>
  );
}
