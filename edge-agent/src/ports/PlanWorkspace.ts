import type { GitInfoSchema } from '@driftline/protocol';
import type { z } from 'zod';

export type GitInfo = z.infer<typeof GitInfoSchema>;

/** Commit, branch and dirtiness of a working directory, or undefined when it is not a repository. */
export interface GitProbe {
  describe(dir: string): Promise<GitInfo | undefined>;
}

/** A private directory for one run's plan file (it holds every value in clear), removed afterwards. */
export interface ScratchSpace {
  create(): Promise<{ path: string; dispose(): Promise<void> }>;
}
