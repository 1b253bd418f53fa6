import type { DownlinkCustody } from '../ports/Custody.js';
import { slotState, type UpstreamSlot } from './upstreamSlot.js';

/**
 * What one watch round did: `unsupported` (404) sends the upstream back to the pull loop. `taken` is the
 * bundles the pulls took; `early` a quiet answer well before the hold asked for ended. Either of those
 * from an upstream is a false alarm the relay rests after (a hop that lies would otherwise loop it).
 */
export type WatchOutcome =
  | { kind: 'pulled'; sites: number; taken: number; refused: string[] }
  | { kind: 'quiet'; early: boolean; refused: string[] }
  | { kind: 'closed'; wakeAt: number | null }
  | { kind: 'failed'; reason: string }
  | { kind: 'unsupported' };

/**
 * One round of the downlink watch at one upstream (docs/decisions/620-one-watch-for-all-sites.md): one
 * held request naming every site with the cursor this relay holds there, answered with the sites that
 * have downlink after it; those are pulled as the pull loop pulls them (`pull`). The hold ends with the
 * contact window. A watch that fails for another reason than a 404 pulls every site this round, so a
 * broken watch is never worse than the pull loop it replaced.
 */
export async function watchStep(d: {
  custody: Pick<DownlinkCustody, 'upstreamCursor'>;
  slot: UpstreamSlot;
  sites: readonly string[];
  now: () => number;
  /** The longest to ask for, seconds (the relay's `forward.watchS`, at most the upstream's `watchS`). */
  waitS: number;
  signal?: AbortSignal;
  /** Pulls these sites' downlink from this upstream (the pull loop's step); answers bundles taken. */
  pull: (sites: readonly string[]) => Promise<number>;
}): Promise<WatchOutcome> {
  const { slot, now } = d;
  const up = slot.upstream;
  const state = slotState(slot, now());
  if (!state.ready) return { kind: 'closed', wakeAt: state.wakeAt };
  if (!up.watchDownlink) return { kind: 'unsupported' };
  const untilClose = state.closesAt === undefined ? d.waitS : Math.floor((state.closesAt - now()) / 1000);
  const waitS = Math.max(0, Math.min(d.waitS, untilClose));
  if (waitS === 0) {
    // the window closes within the second: one pull of every site, then wait for the next window
    await d.pull(d.sites);
    return { kind: 'closed', wakeAt: state.closesAt ?? null };
  }
  const cursors = new Map(d.sites.map((s) => [s, d.custody.upstreamCursor(up.name, s) ?? '0']));
  const asked = now();
  const r = await up.watchDownlink(cursors, waitS, d.signal);
  // let go on purpose (the relay's sites changed, or it stops): the next round names the sites as they are
  if (d.signal?.aborted) return { kind: 'quiet', early: false, refused: [] };
  if (!r.ok) {
    if (r.status === 404) return { kind: 'unsupported' };
    await d.pull(d.sites);
    return { kind: 'failed', reason: r.message };
  }
  if (r.sites.length === 0)
    return { kind: 'quiet', early: now() - asked < (waitS * 1000) / 2, refused: r.refused };
  const taken = await d.pull(r.sites);
  return { kind: 'pulled', sites: r.sites.length, taken, refused: r.refused };
}
