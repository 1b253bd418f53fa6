import { createHash } from 'node:crypto';
import { forDisplay, type RequiredProvider } from './init.js';
import { box } from './messages.js';

/**
 * `terraform providers mirror <dir>` as Terraform 1.11 does it (internal/command/providers_mirror.go):
 * for each required provider, one packed zip per `-platform` in `<dir>/<host>/<ns>/<type>/`, then JSON
 * index files for a network mirror (`index.json`: `{"versions": {"<v>": {}}}`, `<v>.json`:
 * `{"archives": {"<os_arch>": {"hashes": ["h1:…"], "url": "<zip name>"}}}`) over every zip there. The
 * real command downloads from the origin registry; the fake takes packages from a local provider cache
 * (unpacked layout) and, without one, fails as the real one does offline.
 */

/** A package in the local cache: the files of `<host>/<ns>/<type>/<version>/<os_arch>/`. */
export interface CachedPackage {
  address: string;
  version: string;
  platform: string;
  files: { name: string; data: Buffer; executable: boolean }[];
}

/** A zip already in the output directory (for the indexes), with its entries' contents. */
export interface MirroredZip {
  address: string;
  version: string;
  platform: string;
  file: string;
  entries: { name: string; data: Buffer }[];
}

/** Go's dirhash.Hash1, Terraform's `h1:` package hash: over the files' sha256 lines, sorted by name. */
export function hashV1(files: { name: string; data: Buffer }[]): string {
  const lines = [...files]
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((f) => `${createHash('sha256').update(f.data).digest('hex')}  ${f.name}\n`)
    .join('');
  return `h1:${createHash('sha256').update(lines).digest('base64')}`;
}

export function zipName(address: string, version: string, platform: string): string {
  const type = address.split('/').pop();
  return `terraform-provider-${type}_${version}_${platform}.zip`;
}

/** Go's json.MarshalIndent(v, "", "  ") for these objects (maps sorted by key). */
function goJson(v: unknown): string {
  const sort = (x: unknown): unknown =>
    x && typeof x === 'object' && !Array.isArray(x)
      ? Object.fromEntries(
          Object.keys(x)
            .sort()
            .map((k) => [k, sort((x as Record<string, unknown>)[k])]),
        )
      : Array.isArray(x)
        ? x.map(sort)
        : x;
  return JSON.stringify(sort(v), null, 2);
}

/** `index.json` and `<version>.json` per provider directory, keyed by path relative to the output dir. */
export function mirrorIndexes(zips: MirroredZip[]): Record<string, string> {
  const byProvider = new Map<string, MirroredZip[]>();
  for (const z of zips) byProvider.set(z.address, [...(byProvider.get(z.address) ?? []), z]);
  const out: Record<string, string> = {};
  for (const [address, list] of byProvider) {
    const versions: Record<string, object> = {};
    const archives: Record<string, Record<string, object>> = {};
    for (const z of list) {
      versions[z.version] = {};
      archives[z.version] = {
        ...archives[z.version],
        [z.platform]: { url: z.file, hashes: [hashV1(z.entries)] },
      };
    }
    out[`${address}/index.json`] = goJson({ versions });
    for (const [v, a] of Object.entries(archives)) out[`${address}/${v}.json`] = goJson({ archives: a });
  }
  return out;
}

export interface MirrorPlan {
  exitCode: number;
  stdout: string;
  stderr: string;
  /** Zips to write: path relative to the output dir, and the cached package they pack. */
  zips: { path: string; pkg: CachedPackage }[];
}

/** Which package goes where, with Terraform's words; the indexes are made after, from what is on disk. */
export function planMirror(i: {
  required: RequiredProvider[];
  platforms: string[];
  cache: CachedPackage[] | null;
}): MirrorPlan {
  const out: string[] = [];
  const errors: string[] = [];
  const zips: MirrorPlan['zips'] = [];
  for (const p of i.required) {
    out.push(`- Mirroring ${forDisplay(p.address)}...`);
    const host = p.address.split('/')[0];
    const available = (i.cache ?? []).filter((c) => c.address === p.address);
    if (i.cache === null || available.length === 0) {
      errors.push(
        box('Provider not available', [
          `Failed to download ${p.address} from its origin registry: could not connect to ${host}: failed to request discovery document: Get "https://${host}/.well-known/terraform.json": dial tcp: lookup ${host}: no such host.`,
        ]),
      );
      continue;
    }
    const version = p.version || newest(available.map((c) => c.version));
    if (p.locked) out.push(`  - Selected v${version} to match dependency lock file`);
    else if (p.version) out.push(`  - Selected v${version} to meet constraints ${p.version}`);
    else out.push(`  - Selected v${version} with no constraints`);
    for (const platform of i.platforms) {
      out.push(`  - Downloading package for ${platform}...`);
      const pkg = available.find((c) => c.version === version && c.platform === platform);
      if (!pkg) {
        errors.push(
          box('Provider release not available', [
            `Failed to download ${p.address} v${version} for ${platform}: provider ${p.address} ${version} is not available for ${platform}.`,
          ]),
        );
        continue;
      }
      zips.push({ path: `${p.address}/${zipName(p.address, version, platform)}`, pkg });
    }
  }
  return { exitCode: errors.length ? 1 : 0, stdout: `${out.join('\n')}\n`, stderr: errors.join(''), zips };
}

function newest(versions: string[]): string {
  const key = (v: string) => v.split(/[.-]/).map((x) => (/^\d+$/.test(x) ? x.padStart(8, '0') : x));
  return [...versions].sort((a, b) => (key(a).join('.') < key(b).join('.') ? 1 : -1))[0] ?? '';
}
