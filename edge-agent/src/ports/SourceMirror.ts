/** What applying a git bundle to a mirror did. */
export type ApplyResult =
  | {
      ok: true /** Refs whose head moved (or appeared): ref → new commit. */;
      updated: Record<string, string>;
    }
  | { ok: false; reason: string };

/**
 * The site's git mirrors of the repositories headquarters delivers (one bare repository each). Only
 * the `git` program touches them; hooks never run and nothing is fetched from a network. `repo` is a
 * plain name (letters, digits, `._-`); any other throws. Adapter: `CliGitMirror`, held to
 * `runSourceMirrorContract` (test/sourceMirrorContract.ts); no memory adapter, since one would be a
 * second git (docs/decisions/120-agent-ledger.md).
 */
export interface SourceMirror {
  /** Verifies a git bundle against the repository's mirror and fetches its branches into it. */
  apply(repo: string, bundlePath: string): Promise<ApplyResult>;
  /** Ref → commit of the repository's mirror (empty when there is no mirror yet). */
  heads(repo: string): Promise<Record<string, string>>;
  /** The commit of `ref`, of `commit` if the mirror holds it, or null. */
  resolve(repo: string, ref: string, commit?: string): Promise<string | null>;
  /** Checks `commit` out into the new directory `dir` (a detached worktree). */
  checkout(repo: string, commit: string, dir: string): Promise<void>;
  /** Removes a worktree made by `checkout` (the directory may already be gone). */
  release(repo: string, dir: string): Promise<void>;
}
