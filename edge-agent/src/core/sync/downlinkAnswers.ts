import { compareDecimalCursors } from '@driftline/protocol';

/**
 * What lets two held pulls of one upstream overlap (docs/decisions/340-no-gap-between-held-pulls.md):
 * both may carry the same bundles, and the one answered last may have been sent after an older cursor.
 */

/** Bundle ids handled lately, kept to skip a second copy before its signature is checked again. */
const SEEN_KEPT = 4096;

/** The most recently handled downlink bundle ids (bounded, oldest forgotten first). */
export class SeenBundles {
  private readonly ids = new Set<string>();

  has(id: string): boolean {
    return this.ids.has(id);
  }

  /** Called only once a bundle verified and was handled: an altered copy under its id is never remembered. */
  add(id: string): void {
    this.ids.delete(id);
    this.ids.add(id);
    if (this.ids.size > SEEN_KEPT) for (const old of this.ids) return void this.ids.delete(old);
  }
}

/**
 * The cursor to keep after an answer: `answered` when the pull was sent after the cursor still held (the
 * usual case); else (another answer moved it meanwhile) the held one for an empty answer, and the later
 * of the two for a page (decimal cursors, as relays give; an opaque one is taken as answered).
 */
export function laterCursor(
  held: string | undefined,
  sent: string | undefined,
  answered: string,
  bundles: number,
): string {
  if (held === sent || held === undefined) return answered;
  if (bundles === 0) return held;
  return (compareDecimalCursors(answered, held) ?? 1) >= 0 ? answered : held;
}
