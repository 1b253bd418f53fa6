import type { Logger } from 'pino';
import type { Stores } from '../adapters/openStores.js';
import { StoreRefusedError } from '../adapters/postgres/errors.js';
import { MergePool } from '../adapters/threads/MergePool.js';
import type { HubConfig } from '../config.js';
import { DocReplicas } from '../core/DocReplicas.js';
import { HeapHeadroom } from '../core/HeapHeadroom.js';
import { sharedHealthCheck } from '../core/storeHealth.js';

/**
 * The agents' document replicas over the store (merged in worker threads when `ingest.mergeWorkers` is
 * set, else bounded by heap headroom), and the store's health for `/v1/health` when it is PostgreSQL.
 */
export function hubReplicas(config: HubConfig, stores: Stores, logger: Logger) {
  const { store, postgres } = stores;
  const merger =
    config.ingest.mergeWorkers > 0
      ? new MergePool(config.ingest.mergeWorkers, (e) =>
          logger.error({ err: e }, 'a merge worker died; replaced'),
        )
      : undefined;
  // PostgreSQL may be down while the hub runs: /v1/health says so (asked at most once a second, down
  // after 3 s without an answer), in a fixed phrase; the error itself goes to the log.
  const storeHealth = postgres
    ? sharedHealthCheck(() => postgres.ping(), {
        ttlMs: 1000,
        timeoutMs: 3000,
        now: () => performance.now(),
        describe: (e) =>
          e instanceof StoreRefusedError
            ? 'the store refused this hub (see its log)'
            : 'the store is unavailable',
        onFailure: (err) => logger.warn({ err }, 'health check: the store did not answer'),
      })
    : undefined;
  // Other hub processes may share a PostgreSQL store: merges lock, events and the sweeps' leader go through it.
  const shared = postgres !== undefined;
  const replicas = new DocReplicas(store, {
    ...(merger ? { merger } : { headroom: new HeapHeadroom() }),
    shared,
  });
  return { replicas, storeHealth, shared };
}
