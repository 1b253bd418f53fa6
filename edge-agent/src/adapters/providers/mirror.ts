import { createHash } from 'node:crypto';
import { createReadStream, type Dirent } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import {
  isProviderVersion,
  isTerraformPlatform,
  type LockedProvider,
  parsePackedZipPath,
  parseProviderAddress,
  providerBuild,
  zipHashes,
} from '@driftline/protocol';

/** A provider build found in a filesystem mirror. */
export interface MirrorBuild {
  /** `registry.terraform.io/hashicorp/aws 5.31.0 linux_amd64` */
  build: string;
  address: string;
  version: string;
  platform: string;
  /** `packed`: `<address>/terraform-provider-<type>_<version>_<platform>.zip`; `unpacked`: `<address>/<version>/<platform>/`. */
  layout: 'packed' | 'unpacked';
  /** Absolute path of the zip or the directory. */
  path: string;
}

export interface MirrorScan {
  builds: MirrorBuild[];
  /** The scan stopped at `maxEntries` directory entries; `builds` is partial. */
  truncated: boolean;
}

/**
 * The provider builds in Terraform filesystem mirrors (`provider_installation { filesystem_mirror }`),
 * in the two layouts Terraform reads: packed zips and unpacked directories. Walks exactly the layouts'
 * depth, never follows a symbolic link below a mirror's root (as Terraform does not), and stops after
 * `maxEntries` directory entries in all. A mirror directory that does not exist holds nothing.
 */
export async function scanMirror(dirs: string[], limits: { maxEntries?: number } = {}): Promise<MirrorScan> {
  let budget = limits.maxEntries ?? 20_000;
  let truncated = false;
  const builds: MirrorBuild[] = [];
  const list = async (dir: string): Promise<Dirent[] | null> => {
    if (budget <= 0) {
      truncated = true;
      return null;
    }
    let entries: Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      return [];
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    if (entries.length > budget) {
      truncated = true;
      entries = entries.slice(0, budget);
    }
    budget -= entries.length;
    return entries;
  };
  const dirsOf = (es: Dirent[]) => es.filter((e) => e.isDirectory());
  scan: for (const root of dirs) {
    for (const host of dirsOf((await list(root)) ?? [])) {
      for (const ns of dirsOf((await list(join(root, host.name))) ?? [])) {
        for (const type of dirsOf((await list(join(root, host.name, ns.name))) ?? [])) {
          const address = `${host.name}/${ns.name}/${type.name}`;
          if (!parseProviderAddress(address)) continue;
          const typeDir = join(root, host.name, ns.name, type.name);
          const entries = await list(typeDir);
          if (!entries) break scan;
          for (const e of entries) {
            if (e.isFile()) {
              const p = parsePackedZipPath(`${address}/${e.name}`);
              if (p) builds.push({ ...p, build: b(p), layout: 'packed', path: join(typeDir, e.name) });
            } else if (e.isDirectory() && isProviderVersion(e.name)) {
              const platforms = await list(join(typeDir, e.name));
              if (!platforms) break scan;
              for (const pl of dirsOf(platforms)) {
                if (!isTerraformPlatform(pl.name)) continue;
                const p = { address, version: e.name, platform: pl.name };
                builds.push({ ...p, build: b(p), layout: 'unpacked', path: join(typeDir, e.name, pl.name) });
              }
            }
          }
        }
      }
    }
  }
  return { builds, truncated };
}

const b = (p: { address: string; version: string; platform: string }) =>
  providerBuild(p.address, p.version, p.platform);

/** The SHA-256 of a file, lowercase hex, read as a stream. */
export async function sha256File(path: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(path)) h.update(chunk as Buffer);
  return h.digest('hex');
}

export interface MissingProviders {
  /** Builds `terraform init` would not find, or would refuse, for `platform`: what headquarters must send. */
  needs: string[];
  /** Why a build that is there would be refused (its zip's SHA-256 is not among the lock file's `zh:` hashes). */
  problems: string[];
}

/**
 * What a lock file needs that the mirrors lack for `platform`. For each locked provider, the first
 * mirror holding its build is the one Terraform would install from; when that copy is a packed zip and
 * the lock has `zh:` hashes for the provider, the zip's SHA-256 must be one of them, else `terraform
 * init` fails its checksum check: that build is a need too, and a problem says why. (`h1:` hashes are
 * of the unpacked contents and are not checked here: that would mean inflating the zip.)
 */
export async function missingProviders(
  lock: LockedProvider[],
  mirrorDirs: string[],
  platform: string,
): Promise<MissingProviders> {
  const { builds } = await scanMirror(mirrorDirs);
  const needs: string[] = [];
  const problems: string[] = [];
  for (const p of lock) {
    const build = providerBuild(p.address, p.version, platform);
    const found = builds.find((x) => x.build === build);
    if (!found) {
      needs.push(build);
      continue;
    }
    const zh = zipHashes(p);
    if (found.layout !== 'packed' || zh.length === 0) continue;
    const sha = await sha256File(found.path);
    if (zh.includes(sha)) continue;
    needs.push(build);
    problems.push(
      `${found.path}: the package for ${p.address} ${p.version} has sha256 ${sha}, which is not among the lock file's zh: hashes (publish the build the lock file names, or update the lock file)`,
    );
  }
  return { needs, problems };
}
