import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ScratchSpace } from '../../ports/PlanWorkspace.js';

/** mkdtemp (mode 0700) under `base` (default: the OS temp dir), removed recursively on dispose. */
export class TmpScratchSpace implements ScratchSpace {
  constructor(private readonly base: string = tmpdir()) {}
  async create() {
    const path = await mkdtemp(join(this.base, 'driftline-plan-'));
    return { path, dispose: () => rm(path, { recursive: true, force: true }) };
  }
}
