import { existsSync } from 'node:fs';
import type { Logger } from 'pino';
import { SqliteDriftStore } from '../adapters/sqlite/SqliteDriftStore.js';
import { driftStorePath } from '../dataDir.js';
import type { DriftStore } from '../ports/DriftStore.js';

/**
 * Copies into the shared database the waivers of a `drift.db` that a hub on PostgreSQL kept in its data
 * directory before decision 470, so an upgrade does not bring waived drift back. A waiver the database
 * already has is left as it is there (removed since, say), so this runs at every start and changes
 * nothing the second time; the file stays. Episodes are not copied: the next plans reopen them.
 * Answers how many were copied.
 */
export async function importLocalWaivers(dataDir: string, to: DriftStore): Promise<number> {
  const path = driftStorePath(dataDir);
  if (!existsSync(path)) return 0;
  const from = new SqliteDriftStore(path);
  try {
    let copied = 0;
    for (const w of await from.listWaivers()) {
      if (await to.getWaiver(w.id)) continue;
      await to.putWaiver(w);
      copied++;
    }
    return copied;
  } finally {
    await from.close();
  }
}

/** `importLocalWaivers` at start: logs what it copied, or why it could not (the hub starts all the same). */
export async function importLocalWaiversAtStart(
  dataDir: string,
  to: DriftStore,
  logger: Logger,
): Promise<void> {
  try {
    const copied = await importLocalWaivers(dataDir, to);
    if (copied > 0)
      logger.info(
        { copied, from: driftStorePath(dataDir) },
        'waivers of the local drift.db copied into the shared database (decision 470)',
      );
  } catch (e) {
    logger.warn(
      { err: e, from: driftStorePath(dataDir) },
      'the waivers of the local drift.db were not copied into the database; the next start tries again',
    );
  }
}
