/**
 * What machine a package is built for: the CPU as `uname -m` names it (what the launcher compares) and
 * the oldest glibc the shipped binaries accept, read from the binaries themselves.
 */
import { readFileSync } from 'node:fs';

/** One target of `npm run package`: Node's name for the CPU, the tarball's and `uname -m`'s. */
export interface Target {
  /** `process.arch` of a Node that runs it. */
  nodeArch: 'x64' | 'arm64';
  /** The tarball's suffix: `linux-<tarballArch>`. */
  tarballArch: 'x64' | 'arm64';
  /** `uname -m` on such a machine. */
  unameM: 'x86_64' | 'aarch64';
}

export const TARGETS: readonly Target[] = [
  { nodeArch: 'x64', tarballArch: 'x64', unameM: 'x86_64' },
  { nodeArch: 'arm64', tarballArch: 'arm64', unameM: 'aarch64' },
];

/**
 * Why `target` cannot be built here, or null when it can. A package carries this machine's Node and the
 * native addons compiled by `npm install` here (better-sqlite3, cbor-extract); there is no cross-compiled
 * copy of either in the tree, so only the machine's own CPU can be packed.
 */
export function cannotBuild(target: Target, here = process.arch): string | null {
  if (process.platform !== 'linux') return `this machine runs ${process.platform}, not Linux`;
  if (target.nodeArch === here) return null;
  return (
    `this machine is ${here} and has no ${target.nodeArch} Node runtime or ${target.nodeArch} build of ` +
    `better-sqlite3's and cbor-extract's native addons to pack; run npm run package on an ${target.unameM} machine`
  );
}

/** `a` compared with `b` as dotted version numbers (`2.34` < `2.36` < `2.100`). */
export function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/**
 * The newest `GLIBC_x.y` symbol version any of `files` (ELF executables or shared objects) refers to:
 * the oldest glibc that can load them all. The dynamic loader refuses a binary that needs a newer
 * version than the system's, so this, not the build machine's own glibc, is the real minimum.
 */
export function minGlibc(files: string[]): string {
  let max = '2.17';
  for (const f of files) {
    const text = readFileSync(f).toString('latin1');
    for (const m of text.matchAll(/GLIBC_(\d+\.\d+(?:\.\d+)?)/g))
      if (compareVersions(m[1]!, max) > 0) max = m[1]!;
  }
  return max.split('.').slice(0, 2).join('.');
}
