import type { GitInfoSchema } from '@driftline/protocol';
import type { z } from 'zod';

export type GitInfo = z.infer<typeof GitInfoSchema>;

/**
 * Commit, branch (none when detached) and dirtiness (tracked files only) of a working directory, or
 * undefined when it is not a repository with a commit. Adapter: `CliGitProbe`, held to
 * `runGitProbeContract` (test/planWorkspaceContract.ts).
 */
export interface GitProbe {
  describe(dir: string): Promise<GitInfo | undefined>;
}

/**
 * A private directory (0700) for one run's plan file (it holds every value in clear), removed with its
 * contents on dispose. Adapter: `TmpScratchSpace`, held to `runScratchSpaceContract`; terraform writes
 * into it, so it is a real directory and there is no memory adapter.
 */
export interface ScratchSpace {
  create(): Promise<{ path: string; dispose(): Promise<void> }>;
}
