/**
 * The one `*` pattern Driftline reads (ref patterns of `source.refs` and `apply.refs`, waiver patterns
 * over addresses and signatures; docs/decisions/280-one-place-per-decision.md).
 */

/**
 * Whether `text` matches `pattern`, where `*` stands for any text (slashes included): the literal pieces are found in
 * order (first at the start, last at the end), each with one `indexOf`, so the time is linear in the
 * sizes, never a backtracking regex.
 */
export function globMatch(pattern: string, text: string): boolean {
  const parts = pattern.split('*');
  if (parts.length === 1) return pattern === text;
  const first = parts[0] as string;
  const last = parts[parts.length - 1] as string;
  if (!text.startsWith(first) || text.length < first.length + last.length) return false;
  let at = first.length;
  for (const p of parts.slice(1, -1)) {
    const i = text.indexOf(p, at);
    if (i < 0) return false;
    at = i + p.length;
  }
  return text.length - last.length >= at && text.endsWith(last);
}
