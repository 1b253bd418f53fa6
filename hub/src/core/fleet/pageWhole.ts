import type { MatrixCell } from '@driftline/protocol';

type Key = { site: string; environment: string; component: string };
const keyText = (c: Key) => `${c.site}\u0000${c.environment}\u0000${c.component}`;

/**
 * A page of a matrix computed whole (of a ref, or at a past time): the cells after the cursor's key, in
 * the key order the cursor is compared in (code units, as `MatrixWindow` pages), at most `limit`; `last`
 * is the page's last cell when more follow. A page never ends between two cells of one key (a default
 * cell and an `@ref` cell of the ref): the cursor would skip the second (decision 640).
 */
export function pageWhole(
  all: readonly MatrixCell[],
  after: Key | undefined,
  limit: number,
): { cells: MatrixCell[]; last: MatrixCell | undefined } {
  const from = after ? keyText(after) : null;
  const rest = all
    .map((c) => ({ c, k: keyText(c) }))
    .filter((x) => from === null || x.k > from)
    .sort((a, b) => (a.k < b.k ? -1 : a.k > b.k ? 1 : 0));
  if (rest.length <= limit) return { cells: rest.map((x) => x.c), last: undefined };
  let end = limit;
  const next = rest[limit]?.k;
  while (end > 0 && rest[end - 1]?.k === next) end--;
  // Every cell of the page shares the next one's key: the page holds all of that key instead.
  if (end === 0) while (end < rest.length && rest[end]?.k === next) end++;
  const cells = rest.slice(0, end).map((x) => x.c);
  return { cells, last: end < rest.length ? cells.at(-1) : undefined };
}
