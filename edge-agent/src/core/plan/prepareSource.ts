import { join, normalize, sep } from 'node:path';
import type { GitInfo } from '../../ports/PlanWorkspace.js';
import type { ProcessResult } from '../../ports/ProcessRunner.js';
import type { SourceMirror } from '../../ports/SourceMirror.js';
import type { ComponentSettings, EnvironmentSettings } from '../settings.js';

/** Which ref (and optionally which commit of it) a run plans; absent for the component's default ref. */
export interface PlanSource {
  ref?: string;
  commit?: string;
}

/** What the site's provider mirrors lack for a working directory's lock file. */
export interface ProviderNeeds {
  /** Needs (`host/ns/type version os_arch`) for the lock file in `dir`; a problem when it does not parse. */
  check(dir: string): Promise<{ ok: true; needs: string[] } | { ok: false; problem: string }>;
}

export interface SourceDeps {
  mirror?: SourceMirror;
  providers?: ProviderNeeds;
  /** Directories `init` installs providers from. */
  providerMirrors: readonly string[];
  /** Writes a file (the generated CLI configuration). */
  writeFile(path: string, text: string): Promise<void>;
  /** Whether a directory exists (a configured working directory); absent: assumed to. */
  isDirectory?(path: string): Promise<boolean>;
}

/** Where a run plans, and what it must undo afterwards. */
export type Prepared =
  | {
      ok: true;
      dir: string;
      ref?: string;
      git?: GitInfo;
      release(): Promise<void>;
    }
  | {
      ok: false;
      status: 'blocked' | 'failed';
      reason: string;
      needs?: string[];
      ref?: string;
      /** What the operator reads (the agent's own words, no tool output). */
      excerpt?: string;
    };

/** The component's default ref: the first of its `refs`. */
export function defaultRef(c: ComponentSettings): string | undefined {
  return c.source?.refs[0];
}

/** `dir` joined with relative `parts`, refusing anything that leaves `dir`. */
export function inside(dir: string, ...parts: string[]): string | null {
  const p = normalize(join(dir, ...parts));
  return p === dir || p.startsWith(dir.endsWith(sep) ? dir : dir + sep) ? p : null;
}

/**
 * Checks the requested commit out of the site's mirror into scratch space (a component with `source`),
 * or uses the configured working directory. A ref or commit the site does not hold is `blocked` with
 * that need: the next git bundle brings it.
 */
export async function prepareSource(
  c: ComponentSettings,
  e: EnvironmentSettings,
  want: PlanSource,
  scratchPath: string,
  d: SourceDeps,
): Promise<Prepared> {
  const noop = async () => {};
  if (!c.source) {
    const dir = e.workingDir ?? (c.workingDir as string);
    if (d.isDirectory && !(await d.isDirectory(dir)))
      return {
        ok: false,
        status: 'failed',
        reason: 'working-dir-missing',
        excerpt: `working directory "${dir}" does not exist (create it or correct workingDir in the agent's config)`,
      };
    return { ok: true, dir, release: noop };
  }
  const ref = want.ref ?? (defaultRef(c) as string);
  const repo = c.source.repo;
  if (!d.mirror) return { ok: false, status: 'failed', reason: 'no-source-mirror', ref };
  const commit = await d.mirror.resolve(repo, ref, want.commit);
  if (!commit) {
    const need = want.commit ? `commit ${want.commit} of ${repo}` : `ref ${ref} of ${repo}`;
    return { ok: false, status: 'blocked', reason: 'source-missing', needs: [need], ref };
  }
  const worktree = join(scratchPath, 'src');
  await d.mirror.checkout(repo, commit, worktree);
  const release = () => d.mirror?.release(repo, worktree) ?? Promise.resolve();
  const dir = inside(worktree, c.source.path, e.workingDir ?? '.');
  if (!dir) {
    await release();
    return { ok: false, status: 'failed', reason: 'path-outside-repository', ref };
  }
  return { ok: true, dir, ref, git: { commit, branch: ref }, release };
}

/** An HCL string literal: quotes, backslashes and template sequences escaped. */
function hclString(s: string): string {
  return JSON.stringify(s)
    .replaceAll('${', () => '$${')
    .replaceAll('%{', () => '%%{');
}

/**
 * Terraform's CLI configuration for an offline `init`: providers only from the delivered filesystem
 * mirrors, never from a registry (`direct` excludes every provider).
 */
export function offlineCliConfig(mirrors: readonly string[]): string {
  const blocks = mirrors.map((m) => `  filesystem_mirror {\n    path = ${hclString(m)}\n  }\n`).join('');
  return `# Written by the Driftline agent for one run: providers come only from delivered mirrors.\nprovider_installation {\n${blocks}  direct {\n    exclude = ["*/*/*"]\n  }\n}\n`;
}

const ADDR = '((?:[a-z0-9.-]{1,100}/)?[a-z0-9_-]{1,64}/[a-z0-9_-]{1,64})';
/** Terraform's words for a provider `init` could not install from the mirrors. */
const NEED_PATTERNS = [
  new RegExp(`provider ${ADDR} was not found in any of the search locations`, 'g'),
  new RegExp(`available versions for provider ${ADDR}: no available releases`, 'g'),
  new RegExp(
    `Provider ${ADDR} v[0-9][0-9A-Za-z.+-]{0,40} does not have a package available for your current platform`,
    'g',
  ),
  new RegExp(`previously-selected version [0-9][0-9A-Za-z.+-]{0,40} of ${ADDR} is no longer available`, 'gi'),
  new RegExp(`Error while installing ${ADDR} v[0-9][0-9A-Za-z.+-]{0,40}: the current package for`, 'g'),
];

/** `hashicorp/aws` → `registry.terraform.io/hashicorp/aws`. */
const fullAddress = (a: string) => (a.split('/').length === 2 ? `registry.terraform.io/${a}` : a);

/**
 * Providers an `init` could not install from the mirrors (Terraform's own words), as needs. Terraform
 * wraps its error boxes at ~78 columns (`│ ` lines): they are joined before matching.
 */
export function initNeeds(r: ProcessResult): string[] {
  const raw = `${r.stdout.slice(0, 256 * 1024)}\n${r.stderr.slice(0, 256 * 1024)}`;
  const text = raw
    .split('\n')
    .map((l) => l.replace(/^[\u2502\u2577\u2575]\s?/, '').trim()) // │ ╷ ╵ (escaped: one-byte bundle source)
    .join(' ');
  const needs = new Set<string>();
  for (const re of NEED_PATTERNS) for (const m of text.matchAll(re)) needs.add(fullAddress(`${m[1]}`));
  return [...needs].slice(0, 50);
}

/** `init` arguments: no input, no colour, and the lock file read-only when there is one. */
export function initArgs(lockFile: boolean): string[] {
  return ['init', '-input=false', '-no-color', ...(lockFile ? ['-lockfile=readonly'] : [])];
}
