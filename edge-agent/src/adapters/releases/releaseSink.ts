import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, open, readlink, rename, rm, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { ReleasesConfig } from '../../configReleases.js';
import type { PublicationSink } from '../../core/publications/ports.js';
import type { Logger } from '../../ports/Logger.js';
import { compareVersions, parseReleaseName, releaseProblem } from './checks.js';
import { UnsafeTarball, unpackTarGz } from './untar.js';

/** What the release sink needs besides the config. */
export interface ReleaseSinkDeps {
  config: ReleasesConfig;
  /** The version of the agent that is running (`edge-agent --version`). */
  runningVersion: string;
  /** This machine's CPU as Node names it (default `process.arch`). */
  arch?: string;
  log: Logger;
}

/** `<dir>/releases/<version>/`: where a placed release is. */
export const releasePath = (dir: string, version: string) => join(dir, 'releases', version);

async function fsyncDir(dir: string): Promise<void> {
  const d = await open(dir, 'r');
  await d.sync().catch(() => {});
  await d.close();
}

/**
 * Points `<dir>/current` at `releases/<version>` in one step: a new symlink under a temporary name,
 * renamed over the old one (a reader sees the old target or the new, never none).
 */
export async function switchCurrent(dir: string, version: string): Promise<string | null> {
  const current = join(dir, 'current');
  const before = await readlink(current).catch(() => null);
  const tmp = join(dir, `.current-${randomBytes(6).toString('hex')}`);
  await symlink(join('releases', version), tmp);
  try {
    await rename(tmp, current);
  } catch (e) {
    await rm(tmp, { force: true });
    throw e;
  }
  await fsyncDir(dir);
  return before;
}

/**
 * The `agent-release` publication kind: an offline package of a newer agent, verified and unpacked into
 * `<releases.dir>/releases/<version>/` next to the running version; `<releases.dir>/current` is
 * repointed only when `releases.switch` is true. Nothing in it is run here.
 */
export function releaseSink(d: ReleaseSinkDeps): PublicationSink {
  const arch = d.arch ?? process.arch;
  const { dir } = d.config;
  const refuse = (name: string): string | null => {
    if (!d.config.install)
      return 'releases.install is not true in agent.yaml: this agent takes no agent-release publications';
    const r = parseReleaseName(name);
    if (!r) return `${name} is not a driftline-edge release (driftline-edge-<version>-linux-<arch>.tar.gz)`;
    if (r.arch !== arch) return `it is built for linux-${r.arch}, this machine is linux-${arch}`;
    if (compareVersions(r.version, d.runningVersion) <= 0)
      return `version ${r.version} is not newer than the running ${d.runningVersion}`;
    if (existsSync(releasePath(dir, r.version)))
      return `version ${r.version} is already placed in ${releasePath(dir, r.version)}`;
    return null;
  };
  return {
    refuse,
    async apply(b) {
      const why = refuse(b.name);
      if (why) return { ok: false, reason: why };
      const r = parseReleaseName(b.name) as NonNullable<ReturnType<typeof parseReleaseName>>;
      const releases = join(dir, 'releases');
      await mkdir(releases, { recursive: true, mode: 0o755 });
      const staging = join(releases, `.incoming-${r.version}-${randomBytes(6).toString('hex')}`);
      await mkdir(staging, { mode: 0o755 });
      try {
        const got = await unpackTarGz(b.path, staging, d.config);
        const problem = await releaseProblem(staging, r, arch);
        if (problem) return { ok: false, reason: `release ${r.version} refused: ${problem}` };
        const dest = releasePath(dir, r.version);
        await rename(staging, dest);
        await fsyncDir(releases);
        d.log.info({ version: r.version, path: dest, ...got }, 'agent release placed');
        if (!d.config.switch) return { ok: true };
        let before: string | null;
        try {
          before = await switchCurrent(dir, r.version);
        } catch (e) {
          const why = (e as NodeJS.ErrnoException).code ?? (e as Error).message;
          const reason = `release ${r.version} placed in ${dest}, but ${join(dir, 'current')} could not be repointed (${why}); switch by hand`;
          return { ok: false, reason };
        }
        d.log.info(
          { version: r.version, current: join(dir, 'current'), before },
          'agent release switched to (the path unit restarts the agent)',
        );
        return { ok: true };
      } catch (e) {
        if (e instanceof UnsafeTarball)
          return { ok: false, reason: `release ${r.version} refused: ${e.message}` };
        throw e;
      } finally {
        await rm(staging, { recursive: true, force: true });
      }
    },
  };
}
