import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it, vi } from 'vitest';
import { openStores } from '../src/adapters/openStores.js';
import { LATEST_VERSION } from '../src/adapters/postgres/migrate.js';
import { MIGRATIONS } from '../src/adapters/postgres/migrations.js';
import { loadConfig, parseConfig } from '../src/config.js';
import { describePg } from './postgres.js';

vi.setConfig({ testTimeout: 180_000, hookTimeout: 180_000 });

const bin = fileURLToPath(new URL('../bin/hub.js', import.meta.url));
const examples = fileURLToPath(new URL('../../examples/', import.meta.url));

/** Runs `hub …` as a process; its exit code and output. */
async function hub(args: string[], env: NodeJS.ProcessEnv = {}) {
  try {
    const r = await promisify(execFile)(process.execPath, [bin, ...args], {
      env: { ...process.env, LOG_LEVEL: 'silent', ...env },
      encoding: 'utf8',
    });
    return { status: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (e) {
    const x = e as { code?: number; stdout?: string; stderr?: string };
    return { status: x.code ?? -1, stdout: x.stdout ?? '', stderr: x.stderr ?? '' };
  }
}

describe('hub.yaml store', () => {
  const parse = (store: object, env: NodeJS.ProcessEnv = {}) => parseConfig({ store }, '/etc/driftline', env);

  it('refuses a password in store.url, saying where it goes instead', () => {
    for (const url of [
      'postgres://hub:s3cret@db:5432/driftline',
      'postgres://hub@db/driftline?password=s3cret',
    ]) {
      const r = parse({ kind: 'postgres', url });
      expect(r.ok).toBe(false);
      if (!r.ok) {
        expect(r.errors).toEqual([
          expect.stringMatching(/^store\.url: holds a password; .*store\.passwordFile.*store\.passwordEnv/),
        ]);
        expect(r.errors.join()).not.toContain('s3cret');
      }
    }
  });

  it('needs url for kind postgres, one password source, and no postgres keys for sqlite', () => {
    const errors = (r: ReturnType<typeof parse>) => (r.ok ? [] : r.errors);
    expect(errors(parse({ kind: 'postgres' }))).toEqual([
      expect.stringMatching(/^store\.url: kind postgres needs url/),
    ]);
    expect(errors(parse({ kind: 'postgres', url: 'mysql://db/x' }))).toEqual([
      expect.stringMatching(/^store\.url: expected a postgres:\/\/ URL, e\.g\. .*, found "mysql:\/\/db\/x"$/),
    ]);
    const both = { kind: 'postgres', url: 'postgres://hub@db/d', passwordFile: 'pw', passwordEnv: 'PW' };
    expect(errors(parse(both))).toEqual(['store: set passwordFile or passwordEnv, not both']);
    expect(errors(parse({ url: 'postgres://hub@db/d' }))).toEqual([
      expect.stringMatching(/^store: .*set kind: postgres/),
    ]);
    const ok = parse({ kind: 'postgres', url: 'postgres://hub@db/d', passwordFile: 'db-password' });
    expect(ok.ok && ok.config.store).toEqual({
      kind: 'postgres',
      url: 'postgres://hub@db/d',
      passwordFile: '/etc/driftline/db-password',
    });
    expect(parse({}).ok && parseConfig({}, '/x', {}).ok).toBe(true);
  });

  it('sizes the connection pool from store.maxConnections, for kind postgres only', async () => {
    const errors = (r: ReturnType<typeof parse>) => (r.ok ? [] : r.errors);
    expect(errors(parse({ maxConnections: 4 }))).toEqual([
      expect.stringMatching(/maxConnections are for kind postgres/),
    ]);
    expect(errors(parse({ kind: 'postgres', url: 'postgres://hub@db/d', maxConnections: 1 })).join()).toMatch(
      /store\.maxConnections/,
    );
    // Nothing listens on port 1: the stores open all the same (503 until the database answers).
    const r = parse({ kind: 'postgres', url: 'postgres://hub@127.0.0.1:1/d', maxConnections: 4 });
    if (!r.ok) throw new Error(r.errors.join('; '));
    let unavailable = '';
    const stores = await openStores(r.config, {
      onUnavailable: (e) => {
        unavailable = e.message;
      },
    });
    try {
      expect(stores.postgres?.pool.options.max).toBe(4);
      expect(unavailable).toMatch(/is unavailable \(ECONNREFUSED\)/);
    } finally {
      await stores.store.close();
      await stores.publications.close();
    }
  });

  it('prints help for migrate with an example', async () => {
    const r = await hub(['migrate', '--help']);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('hub migrate --config hub.yaml');
    expect(r.stdout).toContain('advisory lock');
  });

  it('reads examples/hub-postgres.yaml', () => {
    const r = loadConfig(join(examples, 'hub-postgres.yaml'), {});
    expect(r.ok && r.config.store).toMatchObject({ kind: 'postgres', passwordEnv: 'DRIFTLINE_DB_PASSWORD' });
  });
});

describePg('hub migrate and config check on PostgreSQL', (server) => {
  const setUp = (url: string, extra = '') => {
    const dir = mkdtempSync(join(tmpdir(), 'hub-pgcli-'));
    const cfg = join(dir, 'hub.yaml');
    writeFileSync(
      cfg,
      `dataDir: ./data\nstore:\n  kind: postgres\n  url: ${url}\n  passwordEnv: HUB_TEST_DB_PW\n${extra}`,
    );
    return { dir, cfg, done: () => rmSync(dir, { recursive: true, force: true }) };
  };
  const env = () => ({ HUB_TEST_DB_PW: server().password });

  it('migrates with `hub migrate`, printing what it applied, then finds nothing to do; config check follows', async () => {
    const url = await server().createDatabase();
    const { cfg, done } = setUp(url);
    try {
      const before = JSON.parse((await hub(['config', 'check', '--config', cfg, '--json'], env())).stdout);
      expect(before).toMatchObject({ ok: true, problems: [] });
      expect(before.warnings.join('\n')).toContain(`schema version 0 of ${LATEST_VERSION}; \`hub migrate\``);

      const first = await hub(['migrate', '--config', cfg], env());
      expect(first.status, first.stderr).toBe(0);
      const applied = MIGRATIONS.map((m) => `applied ${m.version}: ${m.name}\n`).join('');
      expect(first.stdout).toBe(`${applied}${url}: schema version ${LATEST_VERSION}\n`);
      const again = JSON.parse((await hub(['migrate', '--config', cfg, '--json'], env())).stdout);
      expect(again).toMatchObject({ kind: 'postgres', applied: [], version: LATEST_VERSION });

      expect((await hub(['user', 'add', 'ada', '--role', 'admin', '--config', cfg], env())).status).toBe(0);
      const after = JSON.parse((await hub(['config', 'check', '--config', cfg, '--json'], env())).stdout);
      expect(after).toMatchObject({ ok: true, users: 1, problems: [] });
    } finally {
      done();
    }
  });

  it('keeps `hub waiver` in the database (no drift.db), where every hub reads it; `hub backup` has no drift.db to copy', async () => {
    const url = await server().createDatabase();
    const { dir, cfg, done } = setUp(url);
    try {
      const add = await hub(
        [
          'waiver',
          'add',
          '--pattern',
          'aws_s3_bucket.*',
          '--expires',
          '7d',
          '--reason',
          'OPS-41',
          '--config',
          cfg,
          '--json',
        ],
        { ...env(), USER: 'ada' },
      );
      expect(add.status, add.stderr).toBe(0);
      const w = JSON.parse(add.stdout);
      expect(w).toMatchObject({ pattern: 'aws_s3_bucket.*', author: 'ada', active: true });
      expect(existsSync(join(dir, 'data', 'drift.db'))).toBe(false);
      const c = await server().client(url);
      try {
        const rows = await c.query('SELECT id FROM drift_waivers');
        expect(rows.rows).toEqual([{ id: w.id }]);
      } finally {
        await c.end();
      }
      const list = JSON.parse((await hub(['waiver', 'list', '--config', cfg, '--json'], env())).stdout);
      expect(list.waivers.map((x: { id: string }) => x.id)).toEqual([w.id]);
      const backup = await hub(['backup', '--out', join(dir, 'backup'), '--config', cfg, '--json'], env());
      expect(backup.status, backup.stderr).toBe(0);
      expect(JSON.parse(backup.stdout).files).not.toContain('drift.db');
    } finally {
      done();
    }
  });

  it('says what is wrong when the database refuses the password or does not answer', async () => {
    const url = await server().createDatabase();
    const { cfg, done } = setUp(url);
    try {
      const wrong = await hub(['config', 'check', '--config', cfg, '--json'], { HUB_TEST_DB_PW: 'not-it' });
      expect(wrong.status).toBe(2);
      expect(JSON.parse(wrong.stdout).problems).toEqual([
        expect.stringMatching(/password authentication failed/),
      ]);
      // `hub run` and the store's CLI verbs say it in one line, no stack trace, and exit 2 (a credential
      // problem, as config check says it; issue 42).
      for (const args of [['run'], ['user', 'list'], ['migrate']]) {
        const r = await hub([...args, '--config', cfg], { HUB_TEST_DB_PW: 'not-it' });
        expect(r.status, `${args.join(' ')}: ${r.stderr}`).toBe(2);
        expect(r.stderr).toMatch(
          /password authentication failed for user .*store\.passwordFile or store\.passwordEnv/,
        );
        expect(r.stderr.trim().split('\n')).toHaveLength(1);
      }
      const unset = await hub(['config', 'check', '--config', cfg, '--json']);
      expect(JSON.parse(unset.stdout).problems).toEqual([
        'store.passwordEnv: HUB_TEST_DB_PW is not set in the environment',
      ]);
      const nowhere = setUp(url.replace(`:${server().port}/`, ':1/'));
      try {
        const m = await hub(['migrate', '--config', nowhere.cfg], env());
        expect(m.status).toBe(1);
        expect(m.stderr).toMatch(
          /^hub migrate: PostgreSQL at 127\.0\.0\.1:1\/\w+ is unavailable \(ECONNREFUSED\): start the database or fix store\.url/,
        );
      } finally {
        nowhere.done();
      }
    } finally {
      done();
    }
  });
});
