import { readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FsPlanFiles } from '../src/adapters/fs/FsPlanFiles.js';
import { MemoryPlanFiles } from '../src/adapters/memory/MemoryPlanFiles.js';
import { runId, tempDir } from './helpers/storeFixtures.js';
import { runPlanFilesContract } from './planFilesContract.js';

const pendingIn = (dir: string) => {
  try {
    return readdirSync(dir).filter((n) => n.startsWith('pending-')).length;
  } catch {
    return 0;
  }
};

runPlanFilesContract('FsPlanFiles', () => {
  const dir = tempDir('driftline-plans-');
  const plans = join(dir, 'plans');
  return {
    files: new FsPlanFiles(plans),
    overwrite: (path, bytes) => writeFileSync(path, bytes),
    pendingStashes: () => pendingIn(plans),
    done: () => rmSync(dir, { recursive: true, force: true }),
  };
});

runPlanFilesContract('MemoryPlanFiles', () => {
  const files = new MemoryPlanFiles();
  return {
    files,
    overwrite: (path, bytes) => files.overwrite(path, bytes),
    pendingStashes: () => files.pending,
    done: () => {},
  };
});

describe('FsPlanFiles on disk', () => {
  it('writes plans 0600 in a 0700 directory, each beside its record', async () => {
    const dir = tempDir();
    const files = new FsPlanFiles(join(dir, 'plans'));
    writeFileSync(join(dir, 'scratch.tfplan'), 'plan');
    const id = runId();
    await files.adopt(await files.stash(join(dir, 'scratch.tfplan')), {
      runId: id,
      environment: 'prod',
      component: 'net',
      ref: 'main',
    });
    expect(statSync(join(dir, 'plans')).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, 'plans', `${id}.tfplan`)).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'plans', `${id}.json`)).mode & 0o777).toBe(0o600);
    expect((await files.open(id))?.path).toBe(join(dir, 'plans', `${id}.tfplan`));
    rmSync(dir, { recursive: true, force: true });
  });

  it('deletes, at the next adopt, a stash left for over a day by an agent that stopped mid-run', async () => {
    const dir = tempDir();
    const plans = join(dir, 'plans');
    let now = 1_700_000_000_000;
    const files = new FsPlanFiles(plans, 3, () => now);
    writeFileSync(join(dir, 'scratch.tfplan'), 'plan');
    const left = await files.stash(join(dir, 'scratch.tfplan'));
    const fresh = await files.stash(join(dir, 'scratch.tfplan'));
    utimesSync(left.path, new Date(now - 86_400_001), new Date(now - 86_400_001));
    utimesSync(fresh.path, new Date(now), new Date(now));
    now += 1;
    const meta = { runId: runId(), environment: 'prod', component: 'net', ref: 'main' };
    await files.adopt(await files.stash(join(dir, 'scratch.tfplan')), meta);
    expect(readdirSync(plans).filter((n) => n.startsWith('pending-'))).toEqual([
      fresh.path.slice(plans.length + 1),
    ]);
    rmSync(dir, { recursive: true, force: true });
  });
});
