/**
 * The hubs fleetScale measures: filled into a data directory (SQLite) or a shared PostgreSQL database
 * before they start, then run each in its own process (hubProcess.ts, compiled first) or, with
 * `inProcess`, in the bench's own process as before. Several hubs share one PostgreSQL database
 * (decision 160).
 */
import { type ChildProcess, fork, spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import { sha256Hex } from '../src/adapters/http/credentials.js';
import { PgDatabase } from '../src/adapters/postgres/PgDatabase.js';
import { PostgresHubStore } from '../src/adapters/postgres/PostgresHubStore.js';
import { SqliteHubStore } from '../src/adapters/sqlite/SqliteHubStore.js';
import { createHub } from '../src/app.js';
import { parseConfig } from '../src/config.js';
import { enrol } from '../src/core/enrolment.js';
import { storePath } from '../src/dataDir.js';
import type { HubStore } from '../src/ports/HubStore.js';
import type { TestClock } from '../test/agentSim.js';
import { addTestUser } from '../test/users.js';
import { hubProbe, type LoopDelayMs, type MemoryMb } from './hubProbe.js';
import type { HubProcessArgs, HubQuestion } from './hubProcess.js';

const ROOT = join(import.meta.dirname, '../..');

export interface BenchHub {
  urls: { hop: string; api: string };
  /** The hub's process id (the bench's own when in process). */
  pid: number;
  advance(ms: number): Promise<void>;
  sweep(): Promise<void>;
  memory(): Promise<MemoryMb>;
  loopDelay(reset: boolean): Promise<LoopDelayMs>;
  close(): Promise<void>;
}

/** The relay's peer, the sites' agents and a viewer, written before any hub starts. */
export async function prepare(
  where: { dataDir: string } | { url: string; password: string },
  sites: { site: string; key: string }[],
  at: number,
): Promise<{ token: string; authorization: string }> {
  if ('dataDir' in where) mkdirSync(where.dataDir, { recursive: true });
  const store: HubStore =
    'url' in where
      ? new PostgresHubStore(new PgDatabase({ url: where.url, password: where.password }))
      : new SqliteHubStore(storePath(where.dataDir));
  try {
    await store.commit({ peers: [{ tokenSha256: sha256Hex('relay-token'), name: 'relay-1', sites: ['*'] }] });
    for (const s of sites) await enrol(store, { site: s.site, agent: 'a1', key: s.key }, at);
    return await addTestUser(store, 'bench', ['viewer']);
  } finally {
    await store.close();
  }
}

/** Compiles hubProcess.ts beside the hub's programs (their merge worker is hub/dist/mergeWorker.js). */
export async function compileHubProcess(): Promise<string> {
  const built = spawnSync(process.execPath, [
    join(ROOT, 'scripts/build.mjs'),
    '--if-stale',
    '--programs',
    '--quiet',
  ]);
  if (built.status !== 0) throw new Error(`npm run build failed: ${built.stderr}`);
  const { build } = await import('esbuild');
  const outfile = join(ROOT, 'hub/dist/bench-hub.mjs');
  await build({
    absWorkingDir: ROOT,
    entryPoints: ['hub/bench/hubProcess.ts'],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    logLevel: 'warning',
    plugins: [
      {
        name: 'external-packages',
        setup(b) {
          b.onResolve({ filter: /^[^./]/ }, (a) =>
            a.path.startsWith('@driftline/') ? undefined : { path: a.path, external: true },
          );
        },
      },
    ],
  });
  return outfile;
}

/** A hub in its own process (hubProcess.ts compiled to `program`). */
export async function childHub(
  program: string,
  args: HubProcessArgs,
  pgPassword?: string,
  execArgv: string[] = [],
): Promise<BenchHub> {
  mkdirSync(args.dataDir, { recursive: true });
  const child: ChildProcess = fork(program, [JSON.stringify(args)], {
    execArgv,
    env: { ...process.env, ...(pgPassword ? { FLEET_PG_PASSWORD: pgPassword } : {}) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let next = 0;
  const urls = await new Promise<{ hop: string; api: string }>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the hub process exited with ${code} before it listened`)));
    child.on(
      'message',
      (m: { ready?: { hop: string; api: string }; id: number; value?: unknown; error?: string }) => {
        if (m.ready) return resolve(m.ready);
        const w = waiting.get(m.id);
        waiting.delete(m.id);
        if (m.error) w?.reject(new Error(m.error));
        else w?.resolve(m.value);
      },
    );
  });
  const ask = <T>(q: HubQuestion): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const id = next++;
      waiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
      child.send({ ...q, id });
    });
  return {
    urls,
    pid: child.pid as number,
    advance: (ms) => ask({ op: 'advance', ms }),
    sweep: () => ask({ op: 'sweep' }),
    memory: () => ask({ op: 'memory' }),
    loopDelay: (reset) => ask({ op: 'loopDelay', reset }),
    close: async () => {
      const gone = new Promise((r) => child.once('exit', r));
      await ask({ op: 'close' }).catch(() => {});
      await gone;
    },
  };
}

/** A hub in the bench's own process (`--in-process`: what the bench measured before). */
export async function inProcessHub(
  args: HubProcessArgs,
  clock: TestClock,
  pgPassword?: string,
): Promise<BenchHub> {
  const cfg = parseConfig(
    {
      dataDir: args.dataDir,
      uiDir: args.uiDir,
      listen: { host: '127.0.0.1', port: 0 },
      sweepIntervalS: 15,
      ...(args.postgres
        ? { store: { kind: 'postgres', url: args.postgres.url, passwordEnv: 'FLEET_PG_PASSWORD' } }
        : {}),
    },
    args.dataDir,
    { ...process.env, ...(pgPassword ? { FLEET_PG_PASSWORD: pgPassword } : {}) },
  );
  if (!cfg.ok) throw new Error(cfg.errors.join('; '));
  if (pgPassword) process.env.FLEET_PG_PASSWORD = pgPassword;
  const hub = await createHub(cfg.config, { clock, logger: pino({ level: 'silent' }) });
  const urls = await hub.listen();
  hub.startTimers();
  const probe = hubProbe(hub);
  return {
    urls,
    pid: process.pid,
    advance: async (ms) => clock.advance(ms),
    sweep: async () => void (await hub.sweeper.sweep()),
    memory: () => probe.memory(),
    loopDelay: async (reset) => probe.loopDelay(reset),
    close: () => hub.close(),
  };
}
