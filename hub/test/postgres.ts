import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chownSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, describe, it } from 'vitest';

const run = promisify(execFile);

/** The superuser of the test cluster. */
const SUPERUSER = 'driftline';

/** Debian's PostgreSQL server binaries (`DRIFTLINE_PG_BIN` overrides), newest version first; or why not. */
function findPgBin(): { bin: string } | { reason: string } {
  const named = process.env.DRIFTLINE_PG_BIN;
  const candidates = named
    ? [named]
    : existsSync('/usr/lib/postgresql')
      ? readdirSync('/usr/lib/postgresql')
          .filter((v) => /^\d+$/.test(v))
          .sort((a, b) => Number(b) - Number(a))
          .map((v) => `/usr/lib/postgresql/${v}/bin`)
      : [];
  const bin = candidates.find((d) => existsSync(join(d, 'initdb')) && existsSync(join(d, 'pg_ctl')));
  if (!bin)
    return {
      reason: `no PostgreSQL server binaries (initdb, pg_ctl) in ${named ?? '/usr/lib/postgresql/<version>/bin'}: install Debian's postgresql package`,
    };
  const major = Number(/\/(\d+)\/bin$/.exec(bin)?.[1] ?? '15');
  if (major < 15) return { reason: `PostgreSQL ${major} in ${bin} is older than 15, which the hub needs` };
  return { bin };
}

/** Where the PostgreSQL binaries are, or why the PostgreSQL suites cannot run here. */
export const PG_BIN = findPgBin();
/** `DRIFTLINE_REQUIRE_PG=1` (CI): no PostgreSQL is a failure, not a skip. */
export const REQUIRE_PG = process.env.DRIFTLINE_REQUIRE_PG === '1';

/** initdb and postgres refuse root: then the cluster runs as `postgres` (or `nobody`), owning its dir. */
function runAs(): { user: string; uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  const passwd = readFileSync('/etc/passwd', 'utf8').split('\n');
  for (const name of ['postgres', 'nobody']) {
    const f = passwd.find((l) => l.startsWith(`${name}:`))?.split(':');
    if (f) return { user: name, uid: Number(f[2]), gid: Number(f[3]) };
  }
  throw new Error('running as root and neither a postgres nor a nobody user exists to run PostgreSQL as');
}

/**
 * A free port of 127.0.0.1 below the kernel's ephemeral range (net.ipv4.ip_local_port_range, 32768 and up
 * here). A cluster that is stopped and started again on its port (pgDown) must find the port still free:
 * in the ephemeral range, a program listening on port 0 or a client connecting out while the database is
 * down may be given that very number (and a client retrying 127.0.0.1:P from source port P connects to
 * itself), and the cluster then cannot come back.
 */
const freePort = async (): Promise<number> => {
  const [low, high] = [20_000, 32_767];
  for (let tries = 0; tries < 200; tries++) {
    const port = low + (randomBytes(2).readUInt16BE(0) % (high - low + 1));
    const free = await new Promise<boolean>((resolve) => {
      const s = createServer();
      s.once('error', () => resolve(false));
      s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
    });
    if (free) return port;
  }
  throw new Error(`no free port of 127.0.0.1 between ${low} and ${high} in 200 tries`);
};

/**
 * A throwaway PostgreSQL cluster: `initdb` in a temp dir, `pg_ctl` on a free port of 127.0.0.1, a
 * superuser with a password (TCP connections must give it: scram-sha-256), removed by `destroy`.
 * Made for tests: fsync and synchronous commit are off unless `durable`.
 */
export class PgServer {
  private dbs = 0;
  private constructor(
    readonly bin: string,
    readonly dir: string,
    readonly port: number,
    readonly password: string,
    private readonly as: { user: string } | null,
    private readonly durable: boolean,
  ) {}

  static async start(opts: { durable?: boolean } = {}): Promise<PgServer> {
    if (!('bin' in PG_BIN)) throw new Error(PG_BIN.reason);
    const as = runAs();
    const dir = mkdtempSync(join(tmpdir(), 'driftline-pg-'));
    const password = randomBytes(12).toString('hex');
    writeFileSync(join(dir, 'pw'), `${password}\n`, { mode: 0o600 });
    if (as) {
      chownSync(dir, as.uid, as.gid);
      chownSync(join(dir, 'pw'), as.uid, as.gid);
    }
    const s = new PgServer(PG_BIN.bin, dir, await freePort(), password, as, opts.durable === true);
    await s.exec('initdb', [
      ...['-D', join(dir, 'data'), '-U', SUPERUSER, `--pwfile=${join(dir, 'pw')}`],
      ...['--auth-local=trust', '--auth-host=scram-sha-256', '-E', 'UTF8', '--no-sync'],
    ]);
    await s.start();
    return s;
  }

  /** Starts (again) the cluster and waits until it accepts connections. */
  async start(): Promise<void> {
    const o = [`-p ${this.port}`, `-k ${this.dir}`, '-c listen_addresses=127.0.0.1'];
    if (!this.durable) o.push('-c fsync=off', '-c synchronous_commit=off', '-c full_page_writes=off');
    await this.exec('pg_ctl', [
      '-D',
      join(this.dir, 'data'),
      '-l',
      join(this.dir, 'log'),
      '-w',
      '-t',
      '120',
      '-o',
      o.join(' '),
      'start',
    ]);
  }

  /** Stops the cluster (`-m fast`: open connections are cut, as when a database server goes down). */
  async stop(): Promise<void> {
    await this.exec('pg_ctl', ['-D', join(this.dir, 'data'), '-w', '-t', '120', '-m', 'fast', 'stop']);
  }

  /** The URL of `database` (without the password, as hub.yaml holds it). */
  url(database: string): string {
    return `postgres://${SUPERUSER}@127.0.0.1:${this.port}/${database}`;
  }

  /** A connected client of the database at `url` (pg takes a URL's empty password over `password`). */
  async client(url: string): Promise<pg.Client> {
    const u = new URL(url);
    u.searchParams.set('password', this.password);
    const c = new pg.Client({ connectionString: u.toString() });
    await c.connect();
    return c;
  }

  /** A new empty database (with the ICU collation of `icuLocale`, say `en-US`, when given); its URL. */
  async createDatabase(opts: { icuLocale?: string } = {}): Promise<string> {
    const name = `hub_${process.pid}_${++this.dbs}`;
    const c = await this.client(this.url('postgres'));
    try {
      const icu = opts.icuLocale
        ? ` TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE '${opts.icuLocale.replace(/[^A-Za-z-]/g, '')}'`
        : '';
      await c.query(`CREATE DATABASE ${name}${icu}`);
    } finally {
      await c.end();
    }
    return this.url(name);
  }

  /** Stops the cluster and removes its directory. */
  async destroy(): Promise<void> {
    await this.stop().catch(() => {});
    rmSync(this.dir, { recursive: true, force: true });
  }

  private async exec(tool: string, args: string[]): Promise<void> {
    const path = join(this.bin, tool);
    const [cmd, argv] = this.as ? ['runuser', ['-u', this.as.user, '--', path, ...args]] : [path, args];
    try {
      await run(cmd, argv, { cwd: this.dir, timeout: 180_000 });
    } catch (e) {
      const log = existsSync(join(this.dir, 'log'))
        ? readFileSync(join(this.dir, 'log'), 'utf8').slice(-2000)
        : '';
      throw new Error(`${tool} ${args.at(-1)} failed: ${(e as Error).message}\n${log}`);
    }
  }
}

/**
 * A describe block with a PostgreSQL cluster for its tests (started before them, removed after).
 * Without PostgreSQL it is reported as skipped with the reason, or fails under `DRIFTLINE_REQUIRE_PG=1`.
 */
export function describePg(
  name: string,
  fn: (server: () => PgServer) => void,
  opts: { durable?: boolean } = {},
) {
  if (!('bin' in PG_BIN)) {
    if (REQUIRE_PG)
      describe(name, () => {
        it('has a PostgreSQL server to run against', () => {
          throw new Error(`${PG_BIN.reason} (DRIFTLINE_REQUIRE_PG=1 makes this a failure)`);
        });
      });
    else {
      console.warn(`${name}: skipped: ${PG_BIN.reason}`);
      describe.skip(`${name} (skipped: ${PG_BIN.reason})`, () => {
        it('runs against PostgreSQL', () => {});
      });
    }
    return;
  }
  describe(name, () => {
    let server: PgServer | undefined;
    beforeAll(async () => {
      server = await PgServer.start(opts);
    }, 180_000);
    afterAll(async () => {
      await server?.destroy();
    }, 180_000);
    fn(() => {
      if (!server) throw new Error('the PostgreSQL server did not start (see the beforeAll error)');
      return server;
    });
  });
}

/**
 * `url` with sessions the database tells when they wait on a lock: a wait past 1 ms is reported to the
 * waiting session's own client as a message (`log_lock_waits` at `client_min_messages = log`), which
 * {@link lockWaits} hears. These are superuser settings: the test cluster's user is one.
 */
export function reportingLockWaits(url: string): string {
  const u = new URL(url);
  u.searchParams.set('options', '-c log_lock_waits=on -c deadlock_timeout=1ms -c client_min_messages=log');
  return u.toString();
}

/**
 * The lock waits the database reports on `pool`'s sessions (opened on a {@link reportingLockWaits} URL;
 * listen before its first query): `next()` resolves with the next report, one already heard counting.
 */
export function lockWaits(pool: pg.Pool): { next(): Promise<string> } {
  const heard: string[] = [];
  const waiting: Array<(m: string) => void> = [];
  pool.on('connect', (c) =>
    c.on('notice', (n) => {
      const m = n.message ?? '';
      if (!/still waiting for .* lock/.test(m)) return;
      const w = waiting.shift();
      if (w) w(m);
      else heard.push(m);
    }),
  );
  return {
    next: () =>
      new Promise<string>((resolve) => {
        const m = heard.shift();
        if (m !== undefined) resolve(m);
        else waiting.push(resolve);
      }),
  };
}
