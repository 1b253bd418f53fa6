import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { SqliteCustody } from './SqliteCustody.js';
import { SqlitePublicationCache } from './SqlitePublicationCache.js';
import { SqliteTokens } from './SqliteTokens.js';

/**
 * The relay's store: one SQLite file (`<dataDir>/relay.sqlite`) for custody, tokens and the cache of
 * publications (docs/decisions/010-relay-custody.md). Only this folder knows the file's tables.
 */
export function openRelayStore(dataDir: string, opts: { maxBytes?: number }, now: () => number) {
  mkdirSync(dataDir, { recursive: true });
  const custody = new SqliteCustody(join(dataDir, 'relay.sqlite'), opts);
  return {
    custody,
    tokens: new SqliteTokens(custody.db, now),
    /** The cache of publications, bounded by `quotaBytes`, counting in custody's counters. */
    publicationCache: (quotaBytes: number) =>
      new SqlitePublicationCache(custody.db, quotaBytes, now, (name, by) => custody.count(name, by)),
  };
}
