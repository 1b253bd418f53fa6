import { compareDecimalCursors } from '@driftline/protocol';

/**
 * What lets two held pulls of one upstream overlap (docs/decisions/340-no-gap-between-held-pulls.md):
 * both may carry the same bundles, and the one answered last may have been sent after an older cursor.
 */

/** Bundle ids handled lately, kept to skip a second copy before its signature is checked again. */
const SEEN_KEPT = 4096;

/**
 * The most recently handled downlink bundles (bounded, oldest forgotten first), each id with the digest of
 * the bytes that were handled: a second copy is skipped only when it is the same bytes. A copy that differs
 * under a handled id (altered on the way, by another upstream than the one that brought the genuine copy)
 * goes on to the signature check, so it is refused and logged whichever copy came first (decision 220).
 */
export class SeenBundles {
  private readonly digests = new Map<string, string>();

  /** Whether exactly these bytes were handled under this id. */
  has(id: string, digest: string): boolean {
    return this.digests.get(id) === digest;
  }

  /** Whether some copy was handled under this id (a verified second copy with other bytes is not handled again). */
  handled(id: string): boolean {
    return this.digests.has(id);
  }

  /** Called only once a bundle verified and was handled: an altered copy under its id is never remembered. */
  add(id: string, digest: string): void {
    this.digests.delete(id);
    this.digests.set(id, digest);
    if (this.digests.size > SEEN_KEPT)
      for (const old of this.digests.keys()) return void this.digests.delete(old);
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
