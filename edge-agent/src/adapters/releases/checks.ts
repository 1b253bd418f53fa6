import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { memberPath } from './untar.js';

/** What a release tarball's name says: `driftline-edge-<version>-linux-<arch>.tar.gz`. */
export interface ReleaseName {
  version: string;
  /** The tarball's CPU name (`x64`, `arm64`): Node's `process.arch`. */
  arch: string;
}

const NAME = /^driftline-edge-(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]{1,40})?)-linux-([a-z0-9_]{1,16})\.tar\.gz$/;

/** Parses a release tarball's name, or null when it is not one. */
export function parseReleaseName(name: string): ReleaseName | null {
  const m = NAME.exec(name);
  return m ? { version: m[1] as string, arch: m[2] as string } : null;
}

/**
 * `a` compared with `b` as versions `x.y.z[-pre]`: numeric parts first; a pre-release is older than its
 * release (`1.2.0-rc.1` < `1.2.0`), and pre-releases compare as text.
 */
export function compareVersions(a: string, b: string): number {
  const [ca = '', pa] = a.split(/-(.*)/s);
  const [cb = '', pb] = b.split(/-(.*)/s);
  const na = ca.split('.').map(Number);
  const nb = cb.split('.').map(Number);
  for (let i = 0; i < Math.max(na.length, nb.length); i++) {
    const d = (na[i] ?? 0) - (nb[i] ?? 0);
    if (d !== 0) return Math.sign(d);
  }
  if (pa === pb) return 0;
  if (pa === undefined) return 1;
  if (pb === undefined) return -1;
  return pa < pb ? -1 : 1;
}

/** ELF `e_machine` values of the CPUs a package is built for, by Node's arch name. */
const ELF_MACHINE: Record<string, number> = { x64: 0x3e, arm64: 0xb7 };
/** `uname -m` of each, as the launcher compares it. */
const UNAME: Record<string, string> = { x64: 'x86_64', arm64: 'aarch64' };

/**
 * Why the unpacked release in `dir` is not a driftline-edge package of `want` for a machine of `arch`,
 * or null when it is: `VERSION` says the version the name says; `bin/edge-agent` is a launcher for
 * this CPU; `node/bin/node` is an ELF executable for it; `SHA256SUMS` lists every file, and every file
 * hashes to what it says.
 */
export async function releaseProblem(dir: string, want: ReleaseName, arch: string): Promise<string | null> {
  const version = await readFile(join(dir, 'VERSION'), 'utf8').catch(() => null);
  if (version === null) return 'it has no VERSION file: not a driftline-edge package';
  if (version.trim() !== want.version)
    return `its VERSION says ${JSON.stringify(version.trim().slice(0, 40))}, its name says ${want.version}`;
  const launcher = await readFile(join(dir, 'bin', 'edge-agent'), 'utf8').catch(() => null);
  const built = launcher && /^build_arch='([^']*)'$/m.exec(launcher)?.[1];
  if (!built) return 'it has no bin/edge-agent launcher: not a driftline-edge package';
  if (built !== UNAME[arch]) return `its launcher is for ${built}, this machine is ${UNAME[arch] ?? arch}`;
  const elf = Buffer.alloc(20);
  const fh = await open(join(dir, 'node', 'bin', 'node'), 'r').catch(() => null);
  if (!fh) return 'it has no node/bin/node: not a driftline-edge package';
  try {
    await fh.read(elf, 0, 20, 0);
  } finally {
    await fh.close();
  }
  if (elf.readUInt32BE(0) !== 0x7f454c46) return 'its node/bin/node is not an ELF executable';
  if (elf.readUInt16LE(18) !== ELF_MACHINE[arch])
    return `its node/bin/node is for ELF machine 0x${elf.readUInt16LE(18).toString(16)}, not this ${UNAME[arch] ?? arch}`;
  return sumsProblem(dir);
}

/** Every regular file under `dir` (relative, `/`-separated), not following symlinks. */
async function regularFiles(dir: string, under = ''): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(join(dir, under), { withFileTypes: true })) {
    const rel = under ? `${under}/${e.name}` : e.name;
    if (e.isDirectory()) out.push(...(await regularFiles(dir, rel)));
    else if (e.isFile()) out.push(rel);
  }
  return out;
}

async function sha256(path: string): Promise<string> {
  const h = createHash('sha256');
  for await (const c of createReadStream(path)) h.update(c as Buffer);
  return h.digest('hex');
}

/** Why `dir/SHA256SUMS` does not vouch for every file in `dir`, or null when it does. */
export async function sumsProblem(dir: string): Promise<string | null> {
  const st = await stat(join(dir, 'SHA256SUMS')).catch(() => null);
  if (!st?.isFile()) return 'it has no SHA256SUMS';
  if (st.size > 1024 * 1024) return 'its SHA256SUMS is over 1 MiB';
  const listed = new Map<string, string>();
  for (const line of (await readFile(join(dir, 'SHA256SUMS'), 'utf8')).split('\n')) {
    if (line === '') continue;
    const m = /^([0-9a-f]{64}) [ *](.+)$/.exec(line);
    if (!m) return `a SHA256SUMS line does not parse: ${JSON.stringify(line.slice(0, 80))}`;
    let path: string;
    try {
      path = memberPath(m[2] as string);
    } catch (e) {
      return `SHA256SUMS: ${(e as Error).message}`;
    }
    listed.set(path, m[1] as string);
  }
  const files = (await regularFiles(dir)).filter((f) => f !== 'SHA256SUMS');
  const unlisted = files.find((f) => !listed.has(f));
  if (unlisted) return `${unlisted} is not listed in SHA256SUMS`;
  for (const [path, want] of listed) {
    const got = await sha256(join(dir, path)).catch(() => null);
    if (got === null) return `${path} is listed in SHA256SUMS but missing`;
    if (got !== want) return `${path} does not match SHA256SUMS (tampered or corrupt)`;
  }
  return null;
}
