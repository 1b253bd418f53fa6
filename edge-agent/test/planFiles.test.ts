import { readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DocApply } from '@driftline/protocol';
import { describe, expect, it } from 'vitest';
import { FsPlanFiles } from '../src/adapters/fs/FsPlanFiles.js';
import { openSqliteLedger } from '../src/adapters/sqlite/openSqliteLedger.js';
import { parseConfig } from '../src/config.js';
import { ApplyCoordinator } from '../src/core/apply/ApplyCoordinator.js';
import { readDoc } from '../src/core/doc/agentDoc.js';
import { runId, tempDir } from './helpers/storeFixtures.js';

describe('kept plan files', () => {
  it('are 0600 in a 0700 directory, the latest 3 per cell, hashed as they are now', async () => {
    const dir = tempDir();
    const files = new FsPlanFiles(join(dir, 'plans'));
    const scratch = join(dir, 'plan.tfplan');
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      writeFileSync(scratch, `plan ${i}`);
      const s = await files.stash(scratch);
      const id = runId();
      ids.push(id);
      await files.adopt(s, { runId: id, environment: 'prod', component: 'net', ref: 'main' });
    }
    writeFileSync(scratch, 'other cell');
    const other = runId();
    await files.adopt(await files.stash(scratch), {
      runId: other,
      environment: 'prod',
      component: 'dns',
      ref: 'main',
    });
    expect(statSync(join(dir, 'plans')).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, 'plans', `${other}.tfplan`)).mode & 0o777).toBe(0o600);
    expect(await files.open(ids[0] as string)).toBeUndefined();
    expect(await files.open(ids[1] as string)).toBeUndefined();
    const kept = await files.open(ids[4] as string);
    expect(kept?.meta).toMatchObject({ component: 'net', ref: 'main' });
    writeFileSync(kept?.path as string, 'tampered');
    expect((await files.open(ids[4] as string))?.sha256).not.toBe(kept?.sha256);
    const stashed = await files.stash(scratch);
    await files.discard(stashed);
    expect(
      readdirSync(join(dir, 'plans'))
        .filter((n) => n.endsWith('.tfplan'))
        .sort(),
    ).toEqual([ids[2], ids[3], ids[4], other].map((id) => `${id}.tfplan`).sort());
    expect(await files.open('../../etc/passwd')).toBeUndefined();
  });
});

describe('an agent that stopped during an apply', () => {
  it('records it apply-failed at start, never runs it again; a queued apply is triggered again', () => {
    const dir = tempDir();
    const { ledger: store } = openSqliteLedger({
      path: join(dir, 'agent.sqlite'),
      site: 'ship-7',
      agent: 'a1',
    });
    const key = `ed25519:${'A'.repeat(43)}`;
    const r = parseConfig(
      `site: ship-7\nagent: a1\ndataDir: ./d\nhubPublicKeyFile: ./k\nupstreams: [{ url: "http://x", tokenFile: ./t }]\ncomponents:\n  - name: net\n    workingDir: ./net\n    environments: [prod]\n    apply: { approvers: ["${key}"] }\n`,
      dir,
    );
    if (!r.ok) throw new Error(r.problems.join());
    const base = (id: string, extra: Partial<DocApply>): DocApply => ({
      runId: id as DocApply['runId'],
      environment: 'prod',
      component: 'net',
      ref: 'main',
      state: 'applying',
      approvalIds: [],
      approvers: [key],
      receivedAt: 1,
      updatedAt: 1,
      ...extra,
    });
    const started = runId();
    const waiting = runId();
    store.setApply({ apply: base(started, { startedAt: 2 }), counted: [] });
    store.setApply({ apply: base(waiting, {}), counted: [] });
    const triggered: object[] = [];
    new ApplyCoordinator({
      site: 'ship-7',
      config: r.config,
      store,
      planFiles: new FsPlanFiles(join(dir, 'plans')),
      runDeps: {} as never,
      now: () => 5,
      log: { info: () => {}, warn: () => {} },
      trigger: (cell) => triggered.push(cell),
    }).resume();
    expect(store.applyRecord(started)?.apply).toMatchObject({ state: 'apply-failed', finishedAt: 5 });
    expect(store.applyRecord(started)?.apply.reason).toMatch(/^interrupted: /);
    expect(store.applyRecord(waiting)?.apply.state).toBe('applying');
    expect(triggered).toEqual([{ component: 'net', environment: 'prod' }]);
    expect(readDoc(store.loadEpoch(1)).applies?.[started]?.state).toBe('apply-failed');
    store.close();
  });
});
