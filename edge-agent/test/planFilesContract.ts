import { createHash } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { KeptPlanMeta, PlanFiles } from '../src/ports/PlanFiles.js';
import { runId, tempDir } from './helpers/storeFixtures.js';

/** One adapter under test, keeping 3 plans per cell, and what the contract needs to look behind it. */
export interface PlanFilesSubject {
  files: PlanFiles;
  /** Replaces the bytes at a stashed or kept plan's `path`, as a change on disk would. */
  overwrite(path: string, bytes: Uint8Array): Promise<void> | void;
  /** How many stashes are neither adopted nor discarded. */
  pendingStashes(): Promise<number> | number;
  done(): void;
}

const sha = (text: string) => createHash('sha256').update(text).digest('hex');
const meta = (id: string, over: Partial<KeptPlanMeta> = {}): KeptPlanMeta => ({
  runId: id,
  environment: 'prod',
  component: 'net',
  ref: 'main',
  ...over,
});

/**
 * What every `PlanFiles` adapter promises (ports/PlanFiles.ts): a stash is a copy of the scratch file
 * with its hash, a kept plan is found by its run id and hashed as its bytes are now, a cell keeps its
 * latest 3 plans (ULID order), discard and remove delete. File modes are the file adapter's own
 * (planFilesAdapters.test.ts).
 */
export function runPlanFilesContract(name: string, setup: () => PlanFilesSubject): void {
  describe(`PlanFiles contract: ${name}`, () => {
    const cleanup: Array<() => void> = [];
    afterEach(() => {
      for (const f of cleanup.splice(0)) f();
    });
    const open = () => {
      const subject = setup();
      const scratchDir = tempDir('driftline-scratch-');
      cleanup.push(subject.done, () => rmSync(scratchDir, { recursive: true, force: true }));
      let n = 0;
      /** A scratch file holding `text`, as terraform leaves one. */
      const scratch = (text: string) => {
        const path = join(scratchDir, `plan-${n++}.tfplan`);
        writeFileSync(path, text);
        return path;
      };
      return { ...subject, scratch };
    };

    it('stashes a copy of the scratch file with its sha256: the scratch file may go at once', async () => {
      const { files, scratch, pendingStashes } = open();
      const path = scratch('plan bytes');
      const stashed = await files.stash(path);
      rmSync(path);
      expect(stashed.sha256).toBe(sha('plan bytes'));
      expect(await pendingStashes()).toBe(1);
      const id = runId();
      await files.adopt(stashed, meta(id, { cellRef: 'pr-1', commit: 'c'.repeat(40) }));
      expect(await pendingStashes()).toBe(0);
      expect(await files.open(id)).toEqual({
        path: expect.any(String),
        sha256: sha('plan bytes'),
        meta: meta(id, { cellRef: 'pr-1', commit: 'c'.repeat(40) }),
      });
    });

    it('hashes a kept plan as its bytes are now, never as they were recorded', async () => {
      const { files, scratch, overwrite } = open();
      const id = runId();
      await files.adopt(await files.stash(scratch('approved bytes')), meta(id));
      const kept = await files.open(id);
      if (!kept) throw new Error('not kept');
      await overwrite(kept.path, new TextEncoder().encode('tampered'));
      expect((await files.open(id))?.sha256).toBe(sha('tampered'));
    });

    it('keeps the latest 3 plans of a cell by run id; other cells and refs keep theirs', async () => {
      const { files, scratch } = open();
      const ids = Array.from({ length: 5 }, () => runId());
      const otherRef = runId();
      const otherComponent = runId();
      await files.adopt(await files.stash(scratch('pr')), meta(otherRef, { cellRef: 'pr-1' }));
      await files.adopt(await files.stash(scratch('dns')), meta(otherComponent, { component: 'dns' }));
      for (const [i, id] of ids.entries())
        await files.adopt(await files.stash(scratch(`plan ${i}`)), meta(id));
      const kept = async (id: string) => (await files.open(id)) !== undefined;
      expect(await Promise.all(ids.map(kept))).toEqual([false, false, true, true, true]);
      expect(await kept(otherRef)).toBe(true);
      expect(await kept(otherComponent)).toBe(true);
      expect((await files.open(ids[4] as string))?.sha256).toBe(sha('plan 4'));
    });

    it('discards a stash and removes a kept plan (a saved plan applies once); both may repeat', async () => {
      const { files, scratch, pendingStashes } = open();
      const stashed = await files.stash(scratch('unchanged'));
      await files.discard(stashed);
      await files.discard(stashed);
      expect(await pendingStashes()).toBe(0);
      const id = runId();
      await files.adopt(await files.stash(scratch('to apply')), meta(id));
      await files.remove(id);
      await files.remove(id);
      expect(await files.open(id)).toBeUndefined();
      expect(await files.open(runId())).toBeUndefined();
    });

    it('keeps a plan only under a run id (a ULID), and opens or removes nothing by another name', async () => {
      const { files, scratch } = open();
      const stashed = await files.stash(scratch('x'));
      await expect(files.adopt(stashed, meta('../../etc/passwd'))).rejects.toThrow(/run id/);
      expect(await files.open('../../etc/passwd')).toBeUndefined();
      await files.remove('../../etc/passwd');
      const id = runId();
      await files.adopt(stashed, meta(id));
      expect((await files.open(id))?.sha256).toBe(sha('x'));
    });
  });
}
