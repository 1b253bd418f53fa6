import type { MatrixCell } from '@driftline/protocol';
import { contactText } from '../core/contact.js';
import { isStale } from '../core/stale.js';
import { statusLook, statusText } from '../core/status.js';
import { shortCommit, tileAge, tileText } from '../core/tile.js';
import { formatAbsolute, formatAgo, formatLag } from '../core/time.js';

/** What one dense-matrix tile shows: icon, a few characters, age, and stale / unreachable marks. */
export function TileFace({ cell, now }: { cell: MatrixCell; now: number }) {
  const look = statusLook(cell.status);
  const stale = isStale(cell, now);
  return (
    <span class="t-face" aria-hidden="true">
      <span class="t-ico">{look.icon}</span>
      <span class="t-txt">{tileText(cell.status, cell.counts)}</span>
      <span class="t-age">
        {stale ? '◔ ' : ''}
        {cell.siteUnreachable ? '⌁ ' : ''}
        {cell.contact === 'waiting' ? '◌ ' : cell.contact === 'overdue' ? '! ' : ''}
        {(cell.checksFailed ?? 0) > 0 ? '✓✕ ' : ''}
        {cell.driftWaived ? 'w ' : ''}
        {tileAge(cell.plannedAt, now)}
      </span>
    </span>
  );
}

/** Separates the parts of the detail when read as one line; the card puts each part on its own line. */
const Sep = () => <span class="sep"> · </span>;

/**
 * Everything known about a cell, in words: the tile's accessible text (hidden visually) and the content
 * of the card shown on hover or focus.
 */
export function TileDetail({
  cell,
  now,
  unreachableSince,
}: {
  cell: MatrixCell;
  now: number;
  unreachableSince: string | null;
}) {
  const look = statusLook(cell.status);
  const stale = isStale(cell, now);
  return (
    <>
      <span class={`badge ${look.tone}`} data-status={cell.status}>
        <span class="icon" aria-hidden="true">
          {look.icon}
        </span>{' '}
        {statusText(cell.status, cell.counts, cell.reason)}
      </span>
      <span class="d-where">
        <Sep />
        {cell.site} · {cell.environment} / {cell.component}
      </span>
      {cell.diagnostic ? (
        <span class="d-line d-diagnostic">
          <Sep />
          {cell.diagnostic}
        </span>
      ) : null}
      {(cell.checksFailed ?? 0) > 0 ? (
        <span class="d-line d-checks" data-checks-failed={cell.checksFailed}>
          <Sep />
          {cell.checksFailed} failing check{cell.checksFailed === 1 ? '' : 's'}
        </span>
      ) : null}
      {cell.driftWaived ? (
        <span class="d-line d-waived">
          <Sep />
          drift waived
        </span>
      ) : null}
      {cell.needs?.length ? (
        <span class="d-needs">
          <Sep />
          needs {cell.needs.join('; ')}
        </span>
      ) : null}
      {cell.plannedAt ? (
        <span class="d-line">
          <Sep />
          planned{' '}
          <time dateTime={cell.plannedAt} title={formatAbsolute(cell.plannedAt)}>
            {formatAgo(cell.plannedAt, now)}
          </time>{' '}
          ({formatAbsolute(cell.plannedAt)})
        </span>
      ) : null}
      {cell.plannedAt && cell.receivedAt ? (
        <span class="d-line">
          <Sep />
          {formatLag(cell.plannedAt, cell.receivedAt)} ({formatAbsolute(cell.receivedAt)})
        </span>
      ) : null}
      {cell.ref || cell.commit ? (
        <span class="d-line">
          <Sep />
          {[cell.ref ? `ref ${cell.ref}` : '', cell.commit ? `commit ${shortCommit(cell.commit)}` : '']
            .filter(Boolean)
            .join(' ')}
        </span>
      ) : null}
      {stale ? (
        <span class="d-line mark-stale">
          <Sep />
          stale: older than twice its expected interval
        </span>
      ) : null}
      {contactText(cell, now) ? (
        <span class={`d-line mark-${cell.contact}`}>
          <Sep />
          {contactText(cell, now)}
        </span>
      ) : null}
      {cell.siteUnreachable ? (
        <span class="d-line mark-unreachable">
          <Sep />
          last known — site unreachable
          {unreachableSince ? ` since ${formatAgo(unreachableSince, now)}` : ''}
        </span>
      ) : null}
    </>
  );
}
