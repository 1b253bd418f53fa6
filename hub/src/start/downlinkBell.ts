import type { Logger } from 'pino';
import type { PgDatabase } from '../adapters/postgres/PgDatabase.js';
import { PgDownlinkBell } from '../adapters/postgres/PgDownlinkBell.js';
import type { PgListener } from '../adapters/postgres/PgListener.js';
import { DownlinkBell, ringOnDownlink } from '../core/downlinkBell.js';
import type { HubStore } from '../ports/HubStore.js';

/**
 * The bell of the relays' downlink watches, rung by every commit of `store` that writes downlink
 * (docs/decisions/620-one-watch-for-all-sites.md); on a database other hubs share, by theirs too,
 * through a notification (docs/decisions/635-downlink-bell-across-hubs.md), heard on `listener`.
 */
export function hubDownlinkBell(
  store: HubStore,
  postgres: PgDatabase | undefined,
  logger: Logger,
  bell: DownlinkBell = new DownlinkBell(),
  listener?: PgListener,
): { bell: DownlinkBell; close(): Promise<void> } {
  const across = postgres
    ? new PgDownlinkBell(postgres, bell, { listener, onError: (e, what) => logger.warn({ err: e }, what) })
    : null;
  ringOnDownlink(store, bell, across ? (sites) => across.tell(sites) : undefined);
  return { bell, close: async () => await across?.close() };
}
