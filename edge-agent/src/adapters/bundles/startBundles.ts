import { join } from 'node:path';
import { Ticker } from '@driftline/hop/timing';
import type { BlobManifest, DocBundleState } from '@driftline/protocol';
import type { AgentConfig } from '../../config.js';
import { BundleReceiver } from '../../core/bundles/BundleReceiver.js';
import type { BundleLedger, BundleSink } from '../../core/bundles/ports.js';
import { FsBundleFiles } from './FsBundleFiles.js';
import { HttpBlobSource } from './HttpBlobSource.js';

export interface RunningBundles {
  receiver: BundleReceiver;
  announce(m: BlobManifest): void;
  stop(): Promise<void>;
}

/**
 * Wires bundles to outposts in the agent daemon: `ledger` (in the agent's SQLite file), partial files
 * under `<dataDir>/bundles-partial`, Range fetches from the upstreams, and a loop that moves one chunk
 * at a time and waits `retryMs` after a failure (the relay may not hold the blob yet, or the link is down).
 */
export function startBundles(
  config: AgentConfig,
  bundles: { ledger: BundleLedger; onStates: (states: Record<string, DocBundleState>) => void },
  upstreams: { url: string; token: string }[],
  now: () => number,
  log: { info(o: object, m: string): void; warn(o: object, m: string): void },
  retryMs = config.bundles.retryMs,
  sinks: Partial<Record<string, BundleSink>> = {},
): RunningBundles {
  const receiver = new BundleReceiver({
    ledger: bundles.ledger,
    files: new FsBundleFiles(join(config.dataDir, 'bundles-partial')),
    source: new HttpBlobSource(upstreams),
    policy: { accept: config.bundles.accept, quotaBytes: config.bundles.quotaBytes },
    sinks,
    chunkBytes: config.bundles.chunkBytes,
    now,
    onStates: bundles.onStates,
    log,
  });
  // One chunk a round; the next at once while there is more, else after `retryMs` or an announcement.
  const loop = new Ticker({
    step: async () => ((await receiver.step()) ? 0 : retryMs),
    restMs: retryMs,
    onError: (e) => void log.warn({ err: (e as Error).message }, 'bundle step failed'),
  });
  loop.start();
  return {
    receiver,
    announce: (m) => {
      receiver.announce(m);
      loop.kick();
    },
    stop: () => loop.stop(),
  };
}
