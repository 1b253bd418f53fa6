import type { CellStatus, PlanCounts } from '@driftline/protocol';
import { statusLook, statusText } from '../core/status.js';

/** Status as text, icon and colour together (never colour alone). */
export function StatusBadge(props: {
  status: CellStatus;
  counts?: PlanCounts | null;
  reason?: string | null;
}) {
  const look = statusLook(props.status);
  return (
    <span class={`badge ${look.tone}`} data-status={props.status}>
      <span class="icon" aria-hidden="true">
        {look.icon}
      </span>{' '}
      {statusText(props.status, props.counts, props.reason)}
    </span>
  );
}
