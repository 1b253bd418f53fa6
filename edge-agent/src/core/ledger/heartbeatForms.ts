import type { wire2 } from '@driftline/protocol';
import type { SyncStorage } from '../../ports/AgentStorage.js';
import { type HeartbeatForm, heartbeatOf, splitLastChunk } from '../doc/heartbeatRound.js';
import type { EpochDocs } from './EpochDocs.js';

export type { HeartbeatForm };

/** Epochs whose last heartbeat is kept: the open one and a sealed one still pending, with room. */
const KEPT = 4;

const sameBytes = (a: Uint8Array, b: Uint8Array) => a.length === b.length && a.every((x, i) => x === b[i]);

/**
 * Deltas as a v2 push carries them (docs/decisions/500-heartbeat-rebuilds-the-change.md), the heartbeat
 * derived once per last change of each epoch: a push, its resends and each upstream's exchange of the same
 * delta reuse it. Kept by the last change's bytes (which fix its hash): a heartbeat reads the document only
 * at that change's parents and hash, so it never goes stale; the changes before it come from each delta.
 * While the hub holds a rejection against this agent, none: a heartbeat it could not rebuild goes as the
 * change itself (read anew each time, so a rejection starting or clearing counts at once).
 */
export class HeartbeatForms {
  private readonly last = new Map<number, { change: Uint8Array; heartbeat: wire2.HeartbeatBody | null }>();

  constructor(
    private readonly storage: Pick<SyncStorage, 'rejections'>,
    private readonly docs: Pick<EpochDocs, 'with'>,
  ) {}

  /** `changes` of epoch `epoch` as a v2 push carries them; null: send the changes. */
  of(epoch: number, changes: Uint8Array): HeartbeatForm | null {
    if (this.storage.rejections().length > 0) return null;
    const split = splitLastChunk(changes);
    if (!split) return null;
    let kept = this.last.get(epoch);
    if (!kept || !sameBytes(kept.change, split.last)) {
      const heartbeat = this.docs.with(epoch, (doc) => heartbeatOf(doc, split.last));
      kept = { change: split.last.slice(), heartbeat };
      this.last.delete(epoch); // the newest last, for the bound below
      this.last.set(epoch, kept);
      for (const e of this.last.keys()) if (this.last.size > KEPT) this.last.delete(e);
    }
    return kept.heartbeat ? { changes: split.rest, heartbeat: kept.heartbeat } : null;
  }
}
