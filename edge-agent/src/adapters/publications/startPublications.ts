import type { HopTransport } from '@driftline/hop/client';
import { Ticker } from '@driftline/hop/timing';
import type { BlobManifest, DocPublicationState } from '@driftline/protocol';
import type { AgentConfig } from '../../config.js';
import { PublicationReceiver } from '../../core/publications/PublicationReceiver.js';
import type { PublicationLedger, PublicationSink } from '../../core/publications/ports.js';
import type { Logger } from '../../ports/Logger.js';
import { FsPublicationFiles, partialDirOf } from './FsPublicationFiles.js';
import { HttpBlobSource } from './HttpBlobSource.js';

export interface RunningPublications {
  receiver: PublicationReceiver;
  announce(m: BlobManifest): void;
  stop(): Promise<void>;
}

/**
 * Wires publications in the agent daemon: `ledger` (in the agent's SQLite file), partial files
 * under `partialDirOf(dataDir)`, Range fetches from the upstreams, and a loop that moves one chunk
 * at a time and waits `retryMs` after a failure (the relay may not hold the blob yet, or the link is down).
 */
export function startPublications(
  config: AgentConfig,
  publications: {
    ledger: PublicationLedger;
    onStates: (states: Record<string, DocPublicationState>) => void;
  },
  upstreams: { url: string; token: string | (() => string); transport?: HopTransport }[],
  now: () => number,
  log: Logger,
  retryMs = config.publications.retryMs,
  sinks: Partial<Record<string, PublicationSink>> = {},
): RunningPublications {
  const receiver = new PublicationReceiver({
    ledger: publications.ledger,
    files: new FsPublicationFiles(partialDirOf(config.dataDir)),
    source: new HttpBlobSource(upstreams),
    policy: { accept: config.publications.accept, quotaBytes: config.publications.quotaBytes },
    sinks,
    chunkBytes: config.publications.chunkBytes,
    now,
    onStates: publications.onStates,
    log,
  });
  // One chunk a round; the next at once while there is more, else after `retryMs` or an announcement.
  const loop = new Ticker({
    step: async () => ((await receiver.step()) ? 0 : retryMs),
    restMs: retryMs,
    onError: (e) => void log.warn({ err: (e as Error).message }, 'publication step failed'),
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
