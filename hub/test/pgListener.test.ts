import type { HubEvent } from '@driftline/protocol';
import { expect, it, vi } from 'vitest';
import { PgDatabase } from '../src/adapters/postgres/PgDatabase.js';
import { PgDownlinkBell } from '../src/adapters/postgres/PgDownlinkBell.js';
import { PgEvents } from '../src/adapters/postgres/PgEvents.js';
import { PgListener } from '../src/adapters/postgres/PgListener.js';
import { PostgresHubStore } from '../src/adapters/postgres/PostgresHubStore.js';
import { DownlinkBell } from '../src/core/downlinkBell.js';
import { EventLog } from '../src/core/EventLog.js';
import { describePg } from './postgres.js';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 180_000 });

/** Beyond the test's reach: the live events are read on a notification, or when the listener opens. */
const HOUR_MS = 3_600_000;

/** Conditions asked again whenever something is heard (a ring, a warning, an event), never on a timer. */
function asker() {
  const waiting = new Set<() => boolean>();
  return {
    heard: () => {
      for (const w of [...waiting]) if (w()) waiting.delete(w);
    },
    until: (holds: () => boolean) =>
      new Promise<void>((resolve) => {
        const check = () => {
          if (!holds()) return false;
          resolve();
          return true;
        };
        if (!check()) waiting.add(check);
      }),
  };
}

/** A bell that keeps what rang it. */
class KeptBell extends DownlinkBell {
  readonly rings: Array<readonly string[] | 'every'> = [];
  constructor(private readonly heard: () => void) {
    super();
  }
  override ring(sites: Iterable<string>): void {
    this.rings.push([...sites]);
    this.heard();
  }
  override ringEvery(): void {
    this.rings.push('every');
    this.heard();
  }
}

describePg('the one listening connection of a hub on PostgreSQL', (server) => {
  it('carries live events and the downlink bell, and tells both when it breaks and opens again', async () => {
    const url = await server().createDatabase();
    const open = () => {
      const db = new PgDatabase({ url, password: server().password });
      return { db, store: new PostgresHubStore(db) };
    };
    const [a, b] = [open(), open()];
    const { heard, until } = asker();
    const warnings: string[] = [];
    const onError = (_e: unknown, what: string) => {
      warnings.push(what);
      heard();
    };
    const listener = new PgListener(a.db, { retryMs: 20 });
    const bell = new KeptBell(heard);
    const logA = new EventLog();
    logA.subscribe(heard);
    const eventsA = new PgEvents(a.db, logA, { listener, onError, pollMs: HOUR_MS });
    const bellA = new PgDownlinkBell(a.db, bell, { listener, onError });
    const logB = new EventLog();
    const eventsB = new PgEvents(b.db, logB, { pollMs: HOUR_MS });
    const keptB = new KeptBell(heard);
    const bellB = new PgDownlinkBell(b.db, keptB);
    const connections = async (name: string) =>
      (
        await b.db.pool.query(
          'SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()',
          [name],
        )
      ).rows[0].n;
    const ev = (site: string): HubEvent => ({ type: 'reset', reason: 'unknown', site }) as never;
    try {
      await Promise.all([logA.catchUp?.(), logB.catchUp?.()]);
      await until(() => bell.rings.includes('every') && keptB.rings.includes('every'));
      // hub A listens on one connection; hub B, on its own listeners, on one each
      expect(await connections('driftline-hub-listener')).toBe(1);
      expect([
        await connections('driftline-hub-events'),
        await connections('driftline-hub-downlink'),
      ]).toEqual([1, 1]);

      await b.db.pool.query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'driftline-hub-listener' AND datname = current_database()",
      );
      // each user tells of the break in its own words; opened again, the bell rings every site
      await until(() => bell.rings.filter((r) => r === 'every').length === 2);
      expect(warnings).toEqual([
        'the live events listener broke; it reconnects',
        'the downlink listener broke; it reconnects',
      ]);
      expect(await connections('driftline-hub-listener')).toBe(1);

      // both are heard on the new connection (A's events are read on the notification: it does not poll)
      eventsB.publish(ev('s1'));
      bellB.tell(['ship-7']);
      await until(() => logA.seq > 0);
      await until(() => bell.rings.some((r) => Array.isArray(r) && r.includes('ship-7')));
    } finally {
      await eventsB.close();
      await bellB.close();
      await eventsA.close();
      await bellA.close();
      await listener.close();
      await a.store.close();
      await b.store.close();
    }
  });
});
