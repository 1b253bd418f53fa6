import { formatAbsolute, formatAgo } from '../core/time.js';

/**
 * "3 h ago", self-updating through the `now` its parent refreshes; the absolute time is in `title`
 * (hover) and in a span CSS reveals on hover and on focus of the enclosing cell or of the time itself.
 */
export function RelTime({ iso, now, focusable = false }: { iso: string; now: number; focusable?: boolean }) {
  const abs = formatAbsolute(iso);
  return (
    <time class="rel" dateTime={iso} title={abs} tabIndex={focusable ? 0 : undefined}>
      {formatAgo(iso, now)}
      <span class="abs"> ({abs})</span>
    </time>
  );
}
