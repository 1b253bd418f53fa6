import { asBundleId, type BundleId, cryptoRandomBytes, monotonicUlid } from '@driftline/protocol';
import type { Clock } from './Clock.js';

/** Fresh ULIDs (bundle ids, plan request ids). */
export interface IdGen {
  next(): BundleId;
}

export function ulidGen(clock: Clock): IdGen {
  const gen = monotonicUlid(() => clock.now(), cryptoRandomBytes);
  return { next: () => asBundleId(gen()) };
}
