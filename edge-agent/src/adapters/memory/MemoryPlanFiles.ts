import { createHash, randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { cellKey } from '@driftline/protocol';
import type { KeptPlan, KeptPlanMeta, PlanFiles, StashedPlan } from '../../ports/PlanFiles.js';

const RUN_ID = /^[0-9A-HJKMNP-TV-Z]{26}$/;
const sha256Of = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const cellOf = (m: KeptPlanMeta) => cellKey(m.environment, m.component, m.cellRef);

/**
 * Saved plans kept in memory, for tests of what keeps and approves them: the scratch file is read once
 * at `stash` (terraform wrote it on disk), then every byte lives in a map. A path here is a name
 * (`memory:plans/<runId>.tfplan`), not a file a program can read, so no terraform applies one.
 * The same rules as `FsPlanFiles` (both pass `runPlanFilesContract`): kept under a ULID run id, the
 * latest `keepPerCell` per cell, hashed as they are now. Nothing survives the process.
 */
export class MemoryPlanFiles implements PlanFiles {
  private readonly stashed = new Map<string, Uint8Array>();
  private readonly kept = new Map<string, { bytes: Uint8Array; meta: KeptPlanMeta }>();

  constructor(private readonly keepPerCell = 3) {}

  async stash(scratchFile: string): Promise<StashedPlan> {
    const bytes = new Uint8Array(await readFile(scratchFile));
    const path = `memory:plans/pending-${randomBytes(8).toString('hex')}.tfplan`;
    this.stashed.set(path, bytes);
    return { path, sha256: sha256Of(bytes) };
  }

  async adopt(stashed: StashedPlan, meta: KeptPlanMeta): Promise<void> {
    if (!RUN_ID.test(meta.runId)) throw new Error('a kept plan needs a run id (a ULID)');
    const bytes = this.stashed.get(stashed.path);
    if (!bytes) throw new Error(`no stashed plan at ${stashed.path}`);
    this.stashed.delete(stashed.path);
    this.kept.set(meta.runId, { bytes, meta: structuredClone(meta) });
    // Run ids are ULIDs: their order is the order the runs were recorded in.
    const same = [...this.kept.entries()]
      .filter(([, k]) => cellOf(k.meta) === cellOf(meta))
      .map(([runId]) => runId)
      .sort()
      .reverse();
    for (const runId of same.slice(this.keepPerCell)) this.kept.delete(runId);
  }

  async discard(stashed: StashedPlan): Promise<void> {
    this.stashed.delete(stashed.path);
  }

  async open(runId: string): Promise<KeptPlan | undefined> {
    const k = this.kept.get(runId);
    if (!k) return undefined;
    return { path: pathOf(runId), sha256: sha256Of(k.bytes), meta: structuredClone(k.meta) };
  }

  async remove(runId: string): Promise<void> {
    this.kept.delete(runId);
  }

  /** Test support: replaces the bytes of the plan at `path` (kept or stashed), as a change on disk would. */
  overwrite(path: string, bytes: Uint8Array): void {
    if (this.stashed.has(path)) this.stashed.set(path, bytes);
    for (const [runId, k] of this.kept) if (pathOf(runId) === path) k.bytes = bytes;
  }

  /** Test support: the stashes nobody adopted or discarded yet. */
  get pending(): number {
    return this.stashed.size;
  }
}

const pathOf = (runId: string) => `memory:plans/${runId}.tfplan`;
