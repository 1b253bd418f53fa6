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
import { describePg, type PgServer } from './postgres.js';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 180_000 });

/** Waits (bounded in tries, not in time) until `fn` answers true. */
async function until(fn: () => Promise<boolean> | boolean, what: string, tries = 400): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (await fn()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`gave up waiting: ${what}`);
}

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
    const b = storeOn(server(), url);
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
      // b is waiting in the database: give it every chance to (wrongly) enter.
      await until(async () => {
        const r = await a.db.pool.query(
          "SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted",
        );
        return r.rows[0].n === 1;
      }, 'the second locker waits on the lock');
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
    const la = new PgLeader(a.db, { retryMs: 100, onChange: (l) => changes.push(`a ${l}`) });
    await until(() => la.isLeader(), 'a leads');
    const lb = new PgLeader(b.db, { retryMs: 100, onChange: (l) => changes.push(`b ${l}`) });
    try {
      for (let i = 0; i < 5; i++) await lb.tick();
      expect([la.isLeader(), lb.isLeader()]).toEqual([true, false]);
      // Its session cut (the database restarted, a network cut): it may no longer hold the lock, so it
      // steps down; then exactly one of the two leads again.
      await b.db.pool.query(
        "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND classid = 5 AND granted",
      );
      await until(() => changes.includes('a false'), 'a steps down');
      await until(() => la.isLeader() !== lb.isLeader(), 'one leader again');
      // The leader dies (its session ends with it): the other takes over at its next try.
      const [leader, other] = la.isLeader() ? [la, lb] : [lb, la];
      await leader.close();
      await until(() => other.isLeader(), 'the other takes over');
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
      await until(() => log.epoch.startsWith('p'), 'the table’s epoch taken');
      const seen: string[] = [];
      log.subscribe((e) => seen.push(e.id));
      for (let i = 0; i < 20; i++) {
        events.publish({ type: 'reset', reason: 'unknown', site: `s${i}` } as never);
        await events.flushed();
      }
      await until(() => seen.length === 20, 'every event heard by the subscriber');
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
      await until(
        () => logA.epoch === logB.epoch && logA.epoch.startsWith('p'),
        'both take the table’s epoch',
      );
      const seen: string[] = [];
      logB.subscribe((e) => seen.push(e.id));
      const ev = (site: string): HubEvent => ({ type: 'reset', reason: 'unknown', site }) as never;
      ea.publish(ev('s1'));
      eb.publish(ev('s2'));
      ea.publish(ev('s3'));
      await ea.flushed();
      await eb.flushed();
      await until(() => logA.lastId === logB.lastId && seen.length === 3, 'both logs hold all three');
      const firstId = seen[0] as string;
      const since = logA.since(firstId);
      expect(since.kind).toBe('replay');
      expect(since.kind === 'replay' && since.events.map((e) => e.id)).toEqual(seen.slice(1));
      // A hub that starts later is caught up from the table.
      const logC = new EventLog();
      const c = storeOn(server(), url);
      const ec = new PgEvents(c.db, logC, { pollMs: 100 });
      await until(() => logC.lastId === logA.lastId, 'a late hub reads the table');
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
