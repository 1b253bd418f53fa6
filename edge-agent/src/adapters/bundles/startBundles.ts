import { join } from 'node:path';
import type { BlobManifest } from '@driftline/protocol';
import type { AgentConfig } from '../../config.js';
import { BundleReceiver } from '../../core/bundles/BundleReceiver.js';
import type { BundleSink } from '../../core/bundles/ports.js';
import type { SqliteAgentStore } from '../sqlite/SqliteAgentStore.js';
import { FsBundleFiles } from './FsBundleFiles.js';
import { HttpBlobSource } from './HttpBlobSource.js';
import { SqliteBundleLedger } from './SqliteBundleLedger.js';

export interface RunningBundles {
  receiver: BundleReceiver;
  announce(m: BlobManifest): void;
  stop(): Promise<void>;
}

/**
 * Wires bundles to outposts in the agent daemon: a ledger in the agent's SQLite file, partial files
 * under `<dataDir>/bundles-partial`, Range fetches from the upstreams, and a loop that moves one chunk
 * at a time and waits `retryMs` after a failure (the relay may not hold the blob yet, or the link is down).
 */
export function startBundles(
  config: AgentConfig,
  store: SqliteAgentStore,
  upstreams: { url: string; token: string }[],
  now: () => number,
  log: { info(o: object, m: string): void; warn(o: object, m: string): void },
  retryMs = config.bundles.retryMs,
  sinks: Partial<Record<string, BundleSink>> = {},
): RunningBundles {
  const receiver = new BundleReceiver({
    ledger: new SqliteBundleLedger(store.db),
    files: new FsBundleFiles(join(config.dataDir, 'bundles-partial')),
    source: new HttpBlobSource(upstreams),
    policy: { accept: config.bundles.accept, quotaBytes: config.bundles.quotaBytes },
    sinks,
    chunkBytes: config.bundles.chunkBytes,
    now,
    onStates: (states) => store.setBundleStates(states),
    log,
  });
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | null = null;
  const run = async () => {
    let more = false;
    try {
      for (let i = 0; i < 100_000 && !stopped; i++) {
        more = await receiver.step();
        if (!more) break;
      }
    } catch (e) {
      log.warn({ err: (e as Error).message }, 'bundle step failed');
    }
    running = null;
    if (!stopped) timer = setTimeout(kick, retryMs);
  };
  const kick = () => {
    if (stopped || running) return;
    if (timer) clearTimeout(timer);
    running = run();
  };
  kick();
  return {
    receiver,
    announce: (m) => {
      receiver.announce(m);
      kick();
    },
    stop: async () => {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
