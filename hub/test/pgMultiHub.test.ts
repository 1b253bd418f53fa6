import * as A from '@automerge/automerge';
import { generateSigningKeyPair, type HubEvent } from '@driftline/protocol';
import { expect, it, vi } from 'vitest';
import { PgDatabase } from '../src/adapters/postgres/PgDatabase.js';
import { PgEvents } from '../src/adapters/postgres/PgEvents.js';
import { PgLeader } from '../src/adapters/postgres/PgLeader.js';
import { PostgresHubStore } from '../src/adapters/postgres/PostgresHubStore.js';
import { DocReplicas } from '../src/core/DocReplicas.js';
import { EventLog } from '../src/core/EventLog.js';
import { enrol } from '../src/core/enrolment.js';
import { Ingest } from '../src/core/Ingest.js';
import { ulidGen } from '../src/ports/IdGen.js';
import { AgentSim, TestClock } from './agentSim.js';
import { describePg, lockWaits, type PgServer, reportingLockWaits } from './postgres.js';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 180_000 });

/**
 * Resolves once `holds()` does: asked now and again on each call of what it is `on` (`on` registers a
 * callback and answers its removal: a log's subscribers, a leader's changes), never on a timer.
 */
function when(holds: () => boolean, ...on: Array<(fn: () => void) => () => void>): Promise<void> {
  return new Promise<void>((resolve) => {
    const offs: Array<() => void> = [];
    const check = () => {
      if (!holds()) return;
      for (const off of offs) off();
      resolve();
    };
    offs.push(...on.map((o) => o(check)));
    check();
  });
}

/** A leader's changes, told to whoever listens: `onChange` for a {@link PgLeader}, `on` for {@link when}. */
function changeFeed(name: string, changes: string[]) {
  const fns = new Set<() => void>();
  return {
    onChange: (l: boolean) => {
      changes.push(`${name} ${l}`);
      for (const fn of [...fns]) fn();
    },
    on: (fn: () => void) => {
      fns.add(fn);
      return () => fns.delete(fn);
    },
  };
}

/** A log's events, as {@link when} listens. */
const heard = (log: EventLog) => (fn: () => void) => log.subscribe(() => fn());

/** A store of its own pool on `url`, as a second hub process would have. */
const storeOn = (server: PgServer, url: string) => {
  const db = new PgDatabase({ url, password: server.password });
  return { db, store: new PostgresHubStore(db) };
};

/** An Ingest of one "hub" on the shared database. */
async function hubOn(server: PgServer, url: string, clock: TestClock) {
  const { db, store } = storeOn(server, url);
  const replicas = new DocReplicas(store, { maxChunks: 2, shared: true });
  const ingest = new Ingest({
    store,
    clock,
    ids: ulidGen(clock),
    replicas,
    hubPrivateKey: (await generateSigningKeyPair()).privateKey,
    webhookUrls: [],
    log: { warn: () => {} },
    count: { refused: () => {}, merged: () => {} },
  });
  return { db, store, ingest, close: () => store.close() };
}

describePg('several hubs on one PostgreSQL database', (server) => {
  it('serialises two lockers of the same document, not of different ones, and frees a dead session’s lock', async () => {
    const url = await server().createDatabase();
    const a = storeOn(server(), url);
    // the second hub's sessions: the database tells them when they wait on a lock
    const b = storeOn(server(), reportingLockWaits(url));
    const bWaits = lockWaits(b.db.pool);
    try {
      const order: string[] = [];
      let release = () => {};
      const held = new Promise<void>((r) => {
        release = r;
      });
      let aIn = () => {};
      const aEntered = new Promise<void>((r) => {
        aIn = r;
      });
      const first = a.store.lockDocs(['s/a1/epoch-1', 's/a2/epoch-1'], async () => {
        order.push('a in');
        aIn();
        await held;
        order.push('a out');
      });
      await aEntered;
      // Another document is not held up.
      await b.store.lockDocs(['s/a3/epoch-1'], async () => {
        order.push('b other');
      });
      const second = b.store.lockDocs(['s/a2/epoch-1'], async () => {
        order.push('b in');
      });
      // b is waiting in the database (its own report of the wait): give it every chance to (wrongly) enter.
      expect(await bWaits.next()).toMatch(/still waiting for ExclusiveLock on advisory lock/);
      const r = await a.db.pool.query(
        "SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted",
      );
      expect(r.rows[0].n).toBe(1);
      expect(order).toEqual(['a in', 'b other']);
      release();
      await Promise.all([first, second]);
      expect(order).toEqual(['a in', 'b other', 'a out', 'b in']);

      // A locker whose session dies loses its lock (the other hub goes on) and cannot commit unguarded.
      let killed = () => {};
      const dead = new Promise<void>((r) => {
        killed = r;
      });
      const doomed = a.store.lockDocs(['s/a1/epoch-1'], async () => {
        const pid = await a.db.pool.query(
          "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND classid = 4",
        );
        await b.db.pool.query('SELECT pg_terminate_backend($1)', [pid.rows[0].pid]);
        killed();
        await a.store.commit({ bundles: [{ id: 'unguarded', receivedAt: 1 }] });
      });
      const outcome = doomed.then(
        () => 'committed',
        (e: Error) => e.name,
      );
      await dead;
      await b.store.lockDocs(['s/a1/epoch-1'], async () => {});
      expect(await outcome).toBe('StoreUnavailableError');
      expect(await b.store.hasBundle('unguarded')).toBe(false);
    } finally {
      await a.store.close();
      await b.store.close();
    }
  });

  it('stores a bundle that reaches two hubs at once once, and a result once, whichever hub wins', async () => {
    const url = await server().createDatabase();
    const clock = new TestClock();
    const h1 = await hubOn(server(), url, clock);
    const h2 = await hubOn(server(), url, clock);
    try {
      const agents = await Promise.all([1, 2, 3].map((i) => AgentSim.create('ship-7', `a${i}`, clock)));
      for (const a of agents)
        await enrol(h1.store, { site: 'ship-7', agent: a.agent, key: await a.publicKeyText() }, clock.now());
      for (let round = 0; round < 4; round++) {
        const runs = agents.map((a) => a.plan('prod', `net-${a.agent}`, round % 2 ? 'drift' : 'clean'));
        const batch = await Promise.all(agents.map((a) => a.delta()));
        // The same bundles through both hubs at once (a relay that failed over and resent).
        const [r1, r2] = await Promise.all([
          h1.ingest.accept('relay-1', batch),
          h2.ingest.accept('relay-2', batch),
        ]);
        for (let i = 0; i < batch.length; i++)
          expect([r1[i]?.status, r2[i]?.status].sort()).toEqual(['duplicate', 'stored']);
        for (const [i, a] of agents.entries()) {
          expect((await h2.store.getCell('ship-7', 'prod', `net-${a.agent}`))?.runId).toBe(runs[i]);
          a.acked = A.getHeads(a.doc);
        }
      }
      const q = { site: 'ship-7', environment: 'prod', limit: 100 };
      for (const a of agents)
        expect(await h1.store.listRuns({ ...q, component: `net-${a.agent}` })).toHaveLength(4);
    } finally {
      await h1.close();
      await h2.close();
    }
  });

  it('keeps one leader; a leader whose session is cut steps down, and one that dies is taken over', async () => {
    const url = await server().createDatabase();
    const a = storeOn(server(), url);
    const b = storeOn(server(), url);
    const changes: string[] = [];
    const [fa, fb] = [changeFeed('a', changes), changeFeed('b', changes)];
    const la = new PgLeader(a.db, { retryMs: 100, onChange: fa.onChange });
    await when(() => la.isLeader(), fa.on);
    const lb = new PgLeader(b.db, { retryMs: 100, onChange: fb.onChange });
    try {
      for (let i = 0; i < 5; i++) await lb.tick();
      expect([la.isLeader(), lb.isLeader()]).toEqual([true, false]);
      // Its session cut (the database restarted, a network cut): it may no longer hold the lock, so it
      // steps down; then exactly one of the two leads again.
      await b.db.pool.query(
        "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND classid = 5 AND granted",
      );
      await when(() => changes.includes('a false'), fa.on);
      await when(() => la.isLeader() !== lb.isLeader(), fa.on, fb.on);
      // The leader dies (its session ends with it): the other takes over at its next try.
      const [leader, other, otherFeed] = la.isLeader() ? [la, lb, fb] : [lb, la, fa];
      await leader.close();
      await when(() => other.isLeader(), otherFeed.on);
      expect(changes[0]).toBe('a true');
    } finally {
      await la.close();
      await lb.close();
      await a.store.close();
      await b.store.close();
    }
  });

  it('takes the table’s numbering once, on one listener, however often its timer fires before the database answers', async () => {
    const url = await server().createDatabase();
    const a = storeOn(server(), url);
    const log = new EventLog();
    // A timer far quicker than the database's first answers: every tick overtakes the first one.
    const events = new PgEvents(a.db, log, { pollMs: 1 });
    try {
      // what the hub awaits before answering a client: the first tick, which takes the table's epoch
      await log.catchUp?.();
      expect(log.epoch).toMatch(/^p/);
      const seen: string[] = [];
      log.subscribe((e) => seen.push(e.id));
      const all = when(() => seen.length === 20, heard(log));
      for (let i = 0; i < 20; i++) {
        events.publish({ type: 'reset', reason: 'unknown', site: `s${i}` } as never);
        await events.flushed();
      }
      await all; // every event heard by the subscriber
      expect(seen).toHaveLength(20);
      const listeners = await a.db.pool.query(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'driftline-hub-events' AND datname = current_database()",
      );
      expect(listeners.rows[0].n).toBe(1);
    } finally {
      await events.close();
      await a.store.close();
    }
  });

  it('hands every hub the same live events with the same ids, so a client resumes at another hub', async () => {
    const url = await server().createDatabase();
    const a = storeOn(server(), url);
    const b = storeOn(server(), url);
    const logA = new EventLog();
    const logB = new EventLog();
    const ea = new PgEvents(a.db, logA, { pollMs: 100 });
    const eb = new PgEvents(b.db, logB, { pollMs: 100 });
    try {
      // both take the table's epoch on their first tick, which a client's catch-up awaits
      await Promise.all([logA.catchUp?.(), logB.catchUp?.()]);
      expect(logA.epoch).toBe(logB.epoch);
      expect(logA.epoch).toMatch(/^p/);
      const seen: string[] = [];
      logB.subscribe((e) => seen.push(e.id));
      const bothHoldAll = when(
        () => logA.lastId === logB.lastId && seen.length === 3,
        heard(logA),
        heard(logB),
      );
      const ev = (site: string): HubEvent => ({ type: 'reset', reason: 'unknown', site }) as never;
      ea.publish(ev('s1'));
      eb.publish(ev('s2'));
      ea.publish(ev('s3'));
      await ea.flushed();
      await eb.flushed();
      await bothHoldAll;
      const firstId = seen[0] as string;
      const since = logA.since(firstId);
      expect(since.kind).toBe('replay');
      expect(since.kind === 'replay' && since.events.map((e) => e.id)).toEqual(seen.slice(1));
      // A hub that starts later is caught up from the table.
      const logC = new EventLog();
      const c = storeOn(server(), url);
      const ec = new PgEvents(c.db, logC, { pollMs: 100 });
      // a late hub reads the table on its first tick
      await logC.catchUp?.();
      expect(logC.lastId).toBe(logA.lastId);
      expect(logC.since(firstId)).toEqual(since);
      await ec.close();
      await c.store.close();
    } finally {
      await ea.close();
      await eb.close();
      await a.store.close();
      await b.store.close();
    }
  });
});
