import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { MemoryHubStore } from '../src/adapters/memory/MemoryHubStore.js';
import { MemoryPublicationStore } from '../src/adapters/memory/MemoryPublicationStore.js';
import { SqlitePublicationStore } from '../src/adapters/publish/SqlitePublicationStore.js';
import { SqliteHubStore } from '../src/adapters/sqlite/SqliteHubStore.js';
import { MIGRATIONS, SCHEMA_V1 } from '../src/adapters/sqlite/schema.js';
import { runPublicationStoreContract } from './publicationStoreContract.js';
import { runHubStoreContract } from './storeContract.js';
import { cell } from './storeFixtures.js';

runHubStoreContract('memory', async () => ({ store: new MemoryHubStore(), done: async () => {} }));

runHubStoreContract('sqlite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'hub-store-'));
  const store = new SqliteHubStore(join(dir, 'hub.db'));
  return {
    store,
    done: async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

runPublicationStoreContract('memory', async () => ({
  publications: new MemoryPublicationStore(),
  done: async () => {},
}));

runPublicationStoreContract('sqlite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'hub-publications-'));
  const publications = new SqlitePublicationStore(join(dir, 'bundles.db'));
  return {
    publications,
    done: async () => {
      await publications.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

describe('SqlitePublicationStore and rows written before decision 170', () => {
  it('reads rows stored with `bundleId` and answers them with `publicationId`', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hub-publications-old-'));
    const path = join(dir, 'bundles.db');
    try {
      await new SqlitePublicationStore(path).close();
      const db = new Database(path);
      const old = {
        bundleId: 'B0',
        name: 'n',
        fileKind: 'file',
        sha256: 'a'.repeat(64),
        size: 1,
        sites: ['ship-7'],
      };
      db.prepare('INSERT INTO published_bundles (bundle_id, published_at, row) VALUES (?, ?, ?)').run(
        'B0',
        1,
        JSON.stringify({ ...old, publishedAt: 1, expiresAt: null }),
      );
      const delivery = {
        bundleId: 'B0',
        site: 'ship-7',
        agent: null,
        state: 'queued',
        bytes: 0,
        reason: null,
      };
      db.prepare('INSERT INTO bundle_deliveries (bundle_id, site, agent, row) VALUES (?, ?, ?, ?)').run(
        'B0',
        'ship-7',
        '',
        JSON.stringify({ ...delivery, updatedAt: 1 }),
      );
      db.close();
      const s = new SqlitePublicationStore(path);
      expect(await s.getPublication('B0')).toMatchObject({ publicationId: 'B0', name: 'n' });
      expect(await s.getPublication('B0')).not.toHaveProperty('bundleId');
      const placed = {
        site: 'ship-7',
        agent: 'a1',
        state: 'placed',
        bytes: 1,
        reason: null,
        updatedAt: 2,
      } as const;
      await s.report([{ publicationId: 'B0', ...placed }]);
      expect(await s.deliveries('B0')).toEqual([{ publicationId: 'B0', ...placed }]);
      await s.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('SqliteHubStore schema', () => {
  it('migrates a version-1 file: keeps its rows and adds users, sessions and audit', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hub-store-v1-'));
    const path = join(dir, 'hub.db');
    const v1 = new Database(path);
    v1.exec(SCHEMA_V1);
    v1.prepare('INSERT INTO peers (token_sha256, row) VALUES (?, ?)').run(
      't',
      JSON.stringify({ tokenSha256: 't', name: 'relay-1', sites: ['*'] }),
    );
    v1.prepare(
      "INSERT INTO downlink (site, agent, kind, bytes, expires_at) VALUES ('ship-7', 'a1', 'control', x'01', 9)",
    ).run();
    v1.close();
    const store = new SqliteHubStore(path);
    try {
      expect((await store.peerByToken('t'))?.name).toBe('relay-1');
      expect(await store.readDownlink('ship-7', 0, 10)).toMatchObject([
        { kind: 'control', replaceKey: null },
      ]);
      await store.commit({
        users: [{ name: 'ada', roles: ['viewer'], tokenSha256: 'u', createdAt: 1, revokedAt: null }],
      });
      expect((await store.userByToken('u'))?.name).toBe('ada');
    } finally {
      await store.close();
    }
    const again = new Database(path, { readonly: true });
    expect(again.prepare("SELECT value FROM meta WHERE key = 'schema'").get()).toEqual({
      value: String(MIGRATIONS.length),
    });
    again.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('migrates a version-3 file: its runs read as default-cell runs and @ref cells can be stored', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hub-store-v3-'));
    const path = join(dir, 'hub.db');
    const v3 = new Database(path);
    for (const m of MIGRATIONS.slice(0, 3)) v3.exec(m);
    v3.prepare("UPDATE meta SET value = '3' WHERE key = 'schema'").run();
    const old = {
      runId: '01J00000000000000000000001',
      site: 'ship-7',
      agent: 'a1',
      environment: 'prod',
      component: 'net',
      status: 'clean',
      counts: null,
      reason: null,
      plannedAt: 1,
      receivedAt: 1,
      unchanged: false,
      summary: { component: 'net', environment: 'prod', status: 'clean', startedAt: '', finishedAt: '' },
      detailBlob: null,
      docId: 'd',
    };
    v3.prepare(
      'INSERT INTO runs (run_id, site, environment, component, status, received_at, row) VALUES (?, ?, ?, ?, ?, ?, ?)',
    ).run(old.runId, 'ship-7', 'prod', 'net', 'clean', 1, JSON.stringify(old));
    v3.close();
    const store = new SqliteHubStore(path);
    try {
      const q = { site: 'ship-7', environment: 'prod', component: 'net', limit: 10 };
      expect((await store.listRuns(q)).map((r) => r.runId)).toEqual([old.runId]);
      expect(await store.listRuns({ ...q, ref: 'main' })).toEqual([]);
      await store.commit({
        cells: [
          {
            site: 'ship-7',
            environment: 'prod',
            component: 'net',
            agent: 'a1',
            status: 'changes',
            counts: null,
            reason: null,
            runId: '01J00000000000000000000002',
            plannedAt: 2,
            receivedAt: 2,
            expectedIntervalS: null,
            planHash: null,
            staleNotifiedFor: null,
            ref: 'pr/1',
            atRef: 'pr/1',
          },
        ],
      });
      expect((await store.getRefCell('ship-7', 'prod', 'net', 'pr/1'))?.status).toBe('changes');
      expect(await store.getCell('ship-7', 'prod', 'net')).toBeNull();
    } finally {
      await store.close();
    }
    const again = new Database(path, { readonly: true });
    expect(again.prepare("SELECT value FROM meta WHERE key = 'schema'").get()).toEqual({
      value: String(MIGRATIONS.length),
    });
    again.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('migrates a version-4 file: approvers, approvals and applies can be stored', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hub-store-v4-'));
    const path = join(dir, 'hub.db');
    const v4 = new Database(path);
    for (const m of MIGRATIONS.slice(0, 4)) v4.exec(m);
    v4.prepare("UPDATE meta SET value = '4' WHERE key = 'schema'").run();
    v4.close();
    const store = new SqliteHubStore(path);
    try {
      await store.commit({ approvers: [{ name: 'ada', key: `ed25519:${'A'.repeat(43)}`, addedAt: 1 }] });
      expect((await store.listApprovers()).map((a) => a.name)).toEqual(['ada']);
    } finally {
      await store.close();
    }
    const again = new Database(path, { readonly: true });
    expect(again.prepare("SELECT value FROM meta WHERE key = 'schema'").get()).toEqual({
      value: String(MIGRATIONS.length),
    });
    again.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('migrates a version-5 file: its cells are counted and past-deadline ones go stale at the next sweep step', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hub-store-v5-'));
    const path = join(dir, 'hub.db');
    const v5 = new Database(path);
    for (const m of MIGRATIONS.slice(0, 5)) v5.exec(m);
    v5.prepare("UPDATE meta SET value = '5' WHERE key = 'schema'").run();
    const put = v5.prepare(
      'INSERT INTO cells (site, environment, component, run_id, row) VALUES (?, ?, ?, ?, ?)',
    );
    // 1,200 cells: more than one backfill step (500).
    v5.transaction(() => {
      for (let i = 0; i < 1200; i++) {
        const c = { ...cell(`R${i}`, 1000, i % 3 === 0 ? 'drift' : 'clean'), component: `c${i}` };
        put.run(c.site, c.environment, c.component, c.runId, JSON.stringify(c));
      }
    })();
    v5.close();
    const store = new SqliteHubStore(path);
    try {
      expect(await store.cellCounts('site')).toEqual([
        { key: 'ship-7', status: 'clean', kind: '', stale: false, n: 800 },
        { key: 'ship-7', status: 'drift', kind: 'drift', stale: false, n: 400 },
      ]);
      expect((await store.advanceStale(1_000_000, 2000)).length).toBe(1200);
      expect((await store.cellCounts('environment')).map((c) => [c.status, c.stale, c.n])).toEqual([
        ['clean', true, 800],
        ['drift', true, 400],
      ]);
    } finally {
      await store.close();
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('migrates a version-6 file: agent rows written before briefs are briefed when read', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hub-store-v6-'));
    const path = join(dir, 'hub.db');
    const v6 = new Database(path);
    for (const m of MIGRATIONS.slice(0, 6)) v6.exec(m);
    v6.prepare("UPDATE meta SET value = '6' WHERE key = 'schema'").run();
    const row = {
      site: 'ship-7',
      agent: 'a1',
      publicKey: 'ed25519:x',
      enrolledAt: 1,
      revokedAt: null,
      version: null,
      lastContactAt: 5,
      queueDepth: null,
      oldestUnsentAt: null,
      clockOffsetMs: null,
      offsetSampledAt: null,
      upstream: null,
      cadenceS: { 'prod/dns': 60, 'dev/dns': 60 },
      contactIntervalS: 600,
      contactWindows: [],
    };
    v6.prepare('INSERT INTO agents (site, agent, row) VALUES (?, ?, ?)').run(
      'ship-7',
      'a1',
      JSON.stringify(row),
    );
    v6.close();
    const store = new SqliteHubStore(path);
    try {
      const [brief] = await store.listAgentBriefs();
      expect(brief).toMatchObject({ site: 'ship-7', lastContactAt: 5, contactIntervalS: 600 });
      expect(brief?.declared).toEqual({ prod: 1, dev: 1 });
      expect(brief).not.toHaveProperty('cadenceS');
    } finally {
      await store.close();
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('migrates a version-8 file: the refs of cells stored before are totalled', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hub-store-v8-'));
    const path = join(dir, 'hub.db');
    const v8 = new Database(path);
    for (const m of MIGRATIONS.slice(0, 8)) v8.exec(m);
    v8.prepare("UPDATE meta SET value = '8' WHERE key = 'schema'").run();
    const put = v8.prepare(
      'INSERT INTO cells (site, environment, component, run_id, row) VALUES (?, ?, ?, ?, ?)',
    );
    for (const [component, ref, t] of [
      ['dns', 'main', 1000],
      ['net', 'main', 3000],
      ['web', '', 9000],
    ] as const)
      put.run(
        'ship-7',
        'prod',
        component,
        `R-${component}`,
        JSON.stringify({ ...cell(`R-${component}`, t), component, ref }),
      );
    v8.prepare(
      'INSERT INTO ref_cells (site, environment, component, ref, run_id, status, received_at, row) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    ).run(
      'ship-7',
      'prod',
      'dns',
      'pr/1',
      'R-pr',
      'clean',
      5000,
      JSON.stringify({ ...cell('R-pr', 5000), component: 'dns', ref: 'pr/1', atRef: 'pr/1' }),
    );
    v8.close();
    const store = new SqliteHubStore(path);
    try {
      expect(await store.refTotals(10)).toEqual([
        { ref: 'pr/1', cells: 1, plannedAt: 5000, receivedAt: 5000 },
        { ref: 'main', cells: 2, plannedAt: 3000, receivedAt: 3000 },
      ]);
      // The trigger keeps the migrated count: a cell planned of another ref moves it.
      await store.commit({ cells: [{ ...cell('R-2', 4000), component: 'net', ref: 'release' }] });
      expect((await store.refTotals(10)).map((r) => `${r.ref} ${r.cells}`)).toEqual([
        'pr/1 1',
        'release 1',
        'main 1',
      ]);
    } finally {
      await store.close();
    }
    rmSync(dir, { recursive: true, force: true });
  });
});
