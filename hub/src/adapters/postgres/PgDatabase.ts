import pg from 'pg';
import { isRetryable, isUnavailable, toStoreError } from './errors.js';
import { type MigrateResult, migrate, schemaVersion } from './migrate.js';

/** A statement prepared once per connection: `name` must be unique to its `text`. */
export interface Stmt {
  name: string;
  text: string;
}
/** One statement of a transaction's pipeline with its parameters. */
export type Step = [Stmt, unknown[]];

/** How to reach the database. */
export interface PgOptions {
  /** `postgres://user@host:port/database` (no password: that comes apart, below). */
  url: string;
  password?: string | undefined;
  /** Connections in the pool. Default 10. */
  max?: number;
  /** An idle pooled connection broke (say the server restarted); the pool drops it and goes on. */
  onIdleError?: (e: Error) => void;
}

/** int8 (`bigint`) as a number: times in ms and sequence numbers stay far below 2^53. */
const INT8 = 20;
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8
      ? (v: string) => Number(v)
      : pg.types.getTypeParser(oid, format)) as pg.CustomTypesConfig['getTypeParser'],
};

/** Retries of a transaction that lost a serialization or deadlock race. */
const TX_ATTEMPTS = 5;

/**
 * One PostgreSQL database shared by the hub store and the bundle store: a pool that reconnects by
 * itself (a broken connection is dropped and the next query opens a new one), the schema migrated
 * before first use, and transactions sent as one pipeline (one round trip for a whole `commit`).
 * While the database is unreachable every call throws a `StoreUnavailableError`, and the first call
 * after it is back goes through (migrating first if that had not happened yet).
 */
export class PgDatabase {
  readonly pool: pg.Pool;
  /** How to open a connection of one's own (a listener, the leader's lock): the pool's settings. */
  readonly clientConfig: pg.ClientConfig;
  /** `host:port/database` of the URL, for messages (never the password). */
  readonly where: string;
  private migrated: Promise<MigrateResult> | null = null;
  private users = 0;
  private closed: Promise<void> | null = null;

  constructor(opts: PgOptions) {
    const url = new URL(opts.url);
    this.where = `${url.host || url.searchParams.get('host') || 'localhost'}${url.pathname}`;
    // pg reads a password in the query over the one of the URL's user part (absent here by config rule).
    if (opts.password !== undefined) url.searchParams.set('password', opts.password);
    this.clientConfig = {
      connectionString: url.toString(),
      connectionTimeoutMillis: 5000,
      keepAlive: true,
      application_name: 'driftline-hub',
      types,
    };
    this.pool = new pg.Pool({
      ...this.clientConfig,
      max: opts.max ?? 10,
      idleTimeoutMillis: 30_000,
      pipeline: true,
    });
    const onIdleError = opts.onIdleError ?? (() => {});
    this.pool.on('error', onIdleError);
  }

  /** Counts a store using this database; `close` ends the pool when the last one closes. */
  retain(): this {
    this.users++;
    return this;
  }

  /** Migrates before the first use; after a failure (database down) the next call tries again. */
  ready(): Promise<MigrateResult> {
    this.migrated ??= this.connected((c) => migrate(c)).catch((e) => {
      this.migrated = null;
      throw toStoreError(e, this.where);
    });
    return this.migrated;
  }

  /** `hub migrate`: applies what is missing now and says what. */
  migrateNow(): Promise<MigrateResult> {
    this.migrated = null;
    return this.ready();
  }

  /** The schema version, without migrating (`hub config check`). */
  async schemaVersion(): Promise<number> {
    try {
      return await this.connected((c) => schemaVersion(c));
    } catch (e) {
      throw toStoreError(e, this.where);
    }
  }

  /** One statement outside a transaction; rows as pg parsed them. */
  async query<R>(s: Stmt, values: unknown[] = []): Promise<R[]> {
    await this.ready();
    try {
      return (await this.pool.query({ ...s, values })).rows as R[];
    } catch (e) {
      throw toStoreError(e, this.where);
    }
  }

  /**
   * Runs `fn` in a transaction on one connection and commits; rolls back and rethrows on error. A
   * serialization failure or deadlock runs it again (a few times).
   */
  tx<T>(fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
    return this.retrying(async (c) => {
      await c.query('BEGIN');
      try {
        const r = await fn(c);
        await c.query('COMMIT');
        return r;
      } catch (e) {
        await rollback(c, e);
        throw e;
      }
    });
  }

  /**
   * A transaction of writes only, sent in one go (`BEGIN`, every step, `COMMIT`) and then read: one
   * round trip. A failing step aborts the transaction, so the `COMMIT` after it rolls everything back.
   */
  pipeline(steps: readonly Step[]): Promise<void> {
    if (steps.length === 0) return Promise.resolve();
    return this.retrying(async (c) => {
      const sent = [
        c.query('BEGIN'),
        ...steps.map(([s, values]) => c.query({ ...s, values })),
        c.query('COMMIT'),
      ];
      const failed = (await Promise.allSettled(sent)).find((r) => r.status === 'rejected');
      if (failed) {
        await rollback(c, failed.reason);
        throw failed.reason;
      }
    });
  }

  /**
   * Runs `fn` on one pooled connection of its own (session advisory locks live as long as it does).
   * A failure of `fn` destroys the connection rather than returning it: whatever the session held goes.
   */
  async session<T>(fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
    await this.ready();
    let c: pg.PoolClient;
    try {
      c = await this.pool.connect();
    } catch (e) {
      throw toStoreError(e, this.where);
    }
    // Held between queries (while a merge runs): a cut connection says so here, not as an uncaught error.
    let broken: Error | null = null;
    const onError = (e: Error) => {
      broken = e;
    };
    c.on('error', onError);
    try {
      const r = await fn(c);
      if (broken) throw broken;
      c.off('error', onError);
      c.release();
      return r;
    } catch (e) {
      c.off('error', onError);
      c.release(e instanceof Error ? e : new Error(String(e)));
      throw toStoreError(e, this.where);
    }
  }

  /** `pipeline` on a connection the caller holds (inside `session`); retried on a lost serialization race. */
  async pipelineOn(c: pg.PoolClient, steps: readonly Step[]): Promise<void> {
    for (let attempt = 1; steps.length > 0; attempt++) {
      const sent = [
        c.query('BEGIN'),
        ...steps.map(([s, values]) => c.query({ ...s, values })),
        c.query('COMMIT'),
      ];
      const failed = (await Promise.allSettled(sent)).find((r) => r.status === 'rejected');
      if (!failed) return;
      await rollback(c, failed.reason);
      if (attempt >= TX_ATTEMPTS || !isRetryable(failed.reason)) throw failed.reason;
    }
  }

  private async retrying<T>(fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
    await this.ready();
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.connected(fn);
      } catch (e) {
        if (attempt < TX_ATTEMPTS && isRetryable(e)) continue;
        throw toStoreError(e instanceof BrokenConnection ? e.cause : e, this.where);
      }
    }
  }

  /** Resolves when the database answers (migrated first, as every call); throws `StoreUnavailableError` when not. */
  async ping(): Promise<void> {
    await this.query({ name: 'ping', text: 'SELECT 1' });
  }

  /** Ends the pool once every store that retained it has closed. */
  close(): Promise<void> {
    if (--this.users > 0) return Promise.resolve();
    this.closed ??= this.pool.end();
    return this.closed;
  }

  /**
   * Runs `fn` on a pooled connection. A connection that failed (or could not roll back) is destroyed
   * rather than returned; errors pass unchanged, callers name them.
   */
  private async connected<T>(fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
    const c = await this.pool.connect();
    // pg emits a cut connection (EPIPE, "terminated unexpectedly") as an 'error' event on the client as
    // well as rejecting its queries; on a checked-out client with no listener that event is an uncaught
    // exception that ends the hub. The rejection is what callers see; the event only marks it broken.
    let broken: Error | undefined;
    const onError = (e: Error) => {
      broken = e;
    };
    c.on('error', onError);
    try {
      const r = await fn(c);
      c.off('error', onError);
      c.release(broken);
      return r;
    } catch (e) {
      c.off('error', onError);
      c.release(broken ?? (e instanceof BrokenConnection || isUnavailable(e) ? (e as Error) : undefined));
      throw e;
    }
  }
}

/** Ends a failed transaction; a connection that cannot even roll back is broken (`connected` destroys it). */
async function rollback(c: pg.PoolClient, cause: unknown): Promise<void> {
  await c.query('ROLLBACK').catch((re: unknown) => {
    throw new BrokenConnection(cause, re);
  });
}

/** A transaction failed with `cause` and its rollback failed too (with `rollback`). */
class BrokenConnection extends Error {
  constructor(
    override readonly cause: unknown,
    readonly rollback: unknown,
  ) {
    super('the connection broke during a transaction', { cause });
  }
}
