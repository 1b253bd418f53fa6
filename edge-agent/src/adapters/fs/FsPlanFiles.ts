import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { chmod, copyFile, mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { cellKey } from '@driftline/protocol';
import type { KeptPlan, KeptPlanMeta, PlanFiles, StashedPlan } from '../../ports/PlanFiles.js';

const RUN_ID = /^[0-9A-HJKMNP-TV-Z]{26}$/;
/** A stash older than this was left by a run that never finished recording (the agent stopped). */
const STALE_STASH_MS = 86_400_000;

async function sha256Of(path: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(path)) h.update(chunk as Buffer);
  return h.digest('hex');
}

const cellOf = (m: KeptPlanMeta) => cellKey(m.environment, m.component, m.cellRef);

/**
 * Saved plan files in `<dataDir>/plans`: `<runId>.tfplan` (0600) and its `<runId>.json` (what the
 * agent knows of it), the latest `keepPerCell` per cell; the directory is 0700.
 */
export class FsPlanFiles implements PlanFiles {
  constructor(
    readonly dir: string,
    private readonly keepPerCell = 3,
    private readonly now: () => number = Date.now,
  ) {}

  private async ensureDir(): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    await chmod(this.dir, 0o700);
  }

  async stash(scratchFile: string): Promise<StashedPlan> {
    await this.ensureDir();
    const path = join(this.dir, `pending-${randomBytes(8).toString('hex')}.tfplan`);
    await copyFile(scratchFile, path);
    await chmod(path, 0o600);
    return { path, sha256: await sha256Of(path) };
  }

  async adopt(stashed: StashedPlan, meta: KeptPlanMeta): Promise<void> {
    if (!RUN_ID.test(meta.runId)) throw new Error('a kept plan needs a run id (a ULID)');
    await writeFile(join(this.dir, `${meta.runId}.json`), JSON.stringify(meta), { mode: 0o600 });
    await rename(stashed.path, join(this.dir, `${meta.runId}.tfplan`));
    await this.prune(meta);
  }

  async discard(stashed: StashedPlan): Promise<void> {
    await rm(stashed.path, { force: true });
  }

  async open(runId: string): Promise<KeptPlan | undefined> {
    if (!RUN_ID.test(runId)) return undefined;
    const path = join(this.dir, `${runId}.tfplan`);
    let meta: KeptPlanMeta;
    try {
      meta = JSON.parse(await readFile(join(this.dir, `${runId}.json`), 'utf8')) as KeptPlanMeta;
      return { path, sha256: await sha256Of(path), meta };
    } catch {
      return undefined;
    }
  }

  async remove(runId: string): Promise<void> {
    if (!RUN_ID.test(runId)) return;
    await rm(join(this.dir, `${runId}.tfplan`), { force: true });
    await rm(join(this.dir, `${runId}.json`), { force: true });
  }

  /** Deletes the cell's plans older than its latest `keepPerCell`, and stashes nobody adopted. */
  private async prune(latest: KeptPlanMeta): Promise<void> {
    const names = await readdir(this.dir);
    const same: string[] = [];
    for (const name of names) {
      if (name.startsWith('pending-')) {
        const st = await stat(join(this.dir, name)).catch(() => undefined);
        if (st && this.now() - st.mtimeMs > STALE_STASH_MS) await rm(join(this.dir, name), { force: true });
        continue;
      }
      if (!name.endsWith('.json')) continue;
      const runId = name.slice(0, -5);
      const meta = await readFile(join(this.dir, name), 'utf8')
        .then((t) => JSON.parse(t) as KeptPlanMeta)
        .catch(() => undefined);
      if (meta && cellOf(meta) === cellOf(latest)) same.push(runId);
    }
    // Run ids are ULIDs: their order is the order the runs were recorded in.
    same.sort().reverse();
    for (const runId of same.slice(this.keepPerCell)) await this.remove(runId);
  }
}
