/**
 * Terraform's dependency lock file (`.terraform.lock.hcl`) and the names of provider packages.
 *
 * The lock file is HCL, but `terraform init` writes a small, fixed subset of it:
 *
 * ```hcl
 * # This file is maintained automatically by "terraform init".
 * provider "registry.terraform.io/hashicorp/aws" {
 *   version     = "5.31.0"
 *   constraints = "~> 5.0"
 *   hashes = [
 *     "h1:…",
 *     "zh:…",
 *   ]
 * }
 * ```
 *
 * `zh:` hashes are the SHA-256 (lowercase hex) of a provider's release `.zip` archive; `h1:` hashes
 * are of the unpacked package's contents (Go's dirhash). This module reads that subset with a
 * line-by-line tokenizer (no regular expression can backtrack), refuses anything else with the line
 * and what it expected, and caps the file, the providers and the hashes.
 */

/** A lock file is at most this many characters (callers read at most this many bytes). */
export const LOCK_FILE_MAX_CHARS = 1024 * 1024;
export const LOCK_FILE_MAX_PROVIDERS = 500;
export const LOCK_FILE_MAX_HASHES = 200;

/** One `provider` block of a lock file. */
export interface LockedProvider {
  /** `registry.terraform.io/hashicorp/aws` */
  address: string;
  /** `5.31.0` */
  version: string;
  /** `~> 5.0`, when the block records one. */
  constraints?: string;
  /** `h1:…` and `zh:…`, in file order. */
  hashes: string[];
}

export type LockFileResult = { ok: true; providers: LockedProvider[] } | { ok: false; problem: string };

/** A provider's address split into its parts, or null when it is not `<host>/<namespace>/<type>`. */
export function parseProviderAddress(
  address: string,
): { host: string; namespace: string; type: string } | null {
  const parts = address.split('/');
  if (parts.length !== 3) return null;
  const [host, namespace, type] = parts as [string, string, string];
  if (host.length > 100 || !host.split('.').every((l) => /^[a-z0-9][a-z0-9-]{0,62}$/.test(l))) return null;
  if (!/^[a-z0-9][a-z0-9_-]{0,63}$/.test(namespace) || !/^[a-z0-9][a-z0-9_-]{0,63}$/.test(type)) return null;
  return { host, namespace, type };
}

const VERSION = /^[0-9][0-9A-Za-z.+-]{0,63}$/;
const PLATFORM = /^[a-z0-9]{1,20}_[a-z0-9]{1,20}$/;
const ZH = /^zh:[0-9a-f]{64}$/;
const H1 = /^h1:[A-Za-z0-9+/]{43}=$/;
/** Schemes this version does not know are kept, as Terraform keeps them. */
const OTHER_HASH = /^[a-z][a-z0-9]{0,7}:[A-Za-z0-9+/=_.-]{1,200}$/;
const isHash = (h: string) =>
  h.startsWith('zh:') ? ZH.test(h) : h.startsWith('h1:') ? H1.test(h) : OTHER_HASH.test(h);

/** Whether `v` is a provider version as Terraform writes it (`5.31.0`, `1.0.0-beta1`). */
export const isProviderVersion = (v: string): boolean => VERSION.test(v);
/** Whether `p` is a Terraform platform (`linux_amd64`). */
export const isTerraformPlatform = (p: string): boolean => PLATFORM.test(p);

/** `registry.terraform.io/hashicorp/aws 5.31.0 linux_amd64`: a provider build as sites report and need them. */
export function providerBuild(address: string, version: string, platform: string): string {
  return `${address} ${version} ${platform}`;
}

/**
 * Where Terraform's packed filesystem-mirror layout keeps a build, relative to the mirror:
 * `registry.terraform.io/hashicorp/aws/terraform-provider-aws_5.31.0_linux_amd64.zip`
 * (what `terraform providers mirror` writes).
 */
export function packedZipPath(address: string, version: string, platform: string): string {
  const type = address.slice(address.lastIndexOf('/') + 1);
  return `${address}/terraform-provider-${type}_${version}_${platform}.zip`;
}

/** The unpacked layout's directory for a build: `registry.terraform.io/hashicorp/aws/5.31.0/linux_amd64`. */
export function unpackedDirPath(address: string, version: string, platform: string): string {
  return `${address}/${version}/${platform}`;
}

/**
 * The build a packed-layout path names, or null when `path` is not exactly
 * `<host>/<namespace>/<type>/terraform-provider-<type>_<version>_<os>_<arch>.zip` (relative, `/`
 * separators, no `.` or `..` segment, lowercase as Terraform normalises it).
 */
export function parsePackedZipPath(
  path: string,
): { address: string; version: string; platform: string } | null {
  if (path.length > 400) return null;
  const parts = path.split('/');
  if (parts.length !== 4) return null;
  const address = parts.slice(0, 3).join('/');
  const a = parseProviderAddress(address);
  if (!a) return null;
  const file = parts[3]!;
  const prefix = `terraform-provider-${a.type}_`;
  if (!file.startsWith(prefix) || !file.endsWith('.zip')) return null;
  const rest = file.slice(prefix.length, -'.zip'.length).split('_');
  if (rest.length !== 3) return null;
  const [version, os, arch] = rest as [string, string, string];
  const platform = `${os}_${arch}`;
  if (!VERSION.test(version) || !PLATFORM.test(platform)) return null;
  return { address, version, platform };
}

const OS: Record<string, string> = {
  linux: 'linux',
  darwin: 'darwin',
  win32: 'windows',
  freebsd: 'freebsd',
  openbsd: 'openbsd',
  netbsd: 'netbsd',
  sunos: 'solaris',
};
const ARCH: Record<string, string> = { x64: 'amd64', arm64: 'arm64', ia32: '386', arm: 'arm' };

/** Terraform's name for Node's `process.platform` and `process.arch`: `linux`, `x64` → `linux_amd64`. */
export function terraformPlatform(platform: string, arch: string): string {
  return `${OS[platform] ?? platform.toLowerCase()}_${ARCH[arch] ?? arch.toLowerCase()}`;
}

/** The `zh:` hashes of a locked provider, hex only (the SHA-256 of its release zips). */
export function zipHashes(p: LockedProvider): string[] {
  return p.hashes.filter((h) => h.startsWith('zh:')).map((h) => h.slice(3));
}

type Token = { t: 'id' | 'str' | '{' | '}' | '[' | ']' | '=' | ','; v: string };

/** The tokens of one line, or a problem (unterminated string, an escape, a block comment, a stray byte). */
function tokenize(line: string): Token[] | string {
  const out: Token[] = [];
  let i = 0;
  while (i < line.length) {
    const c = line[i]!;
    if (c === ' ' || c === '\t' || c === '\r') i++;
    else if (c === '#' || (c === '/' && line[i + 1] === '/')) break;
    else if (c === '/' && line[i + 1] === '*') return 'block comments are not part of a lock file';
    else if (c === '"') {
      let j = i + 1;
      while (j < line.length && line[j] !== '"' && line[j] !== '\\') j++;
      if (j >= line.length) return 'a string is not closed on its line (expected ")';
      if (line[j] === '\\') return 'escapes in strings are not part of a lock file';
      out.push({ t: 'str', v: line.slice(i + 1, j) });
      i = j + 1;
    } else if ('{}[]=,'.includes(c)) {
      out.push({ t: c as Token['t'], v: c });
      i++;
    } else if (/[A-Za-z_]/.test(c)) {
      let j = i + 1;
      while (j < line.length && /[A-Za-z0-9_-]/.test(line[j]!)) j++;
      out.push({ t: 'id', v: line.slice(i, j) });
      i = j;
    } else return `unexpected character ${JSON.stringify(c)}`;
  }
  return out;
}

const show = (tok: Token | undefined) => (tok ? (tok.t === 'str' ? `"${tok.v}"` : tok.v) : 'end of line');

/**
 * Reads a `.terraform.lock.hcl`: every `provider` block with its version, constraints and hashes.
 * A problem names the line and what was expected there: `line 7: unexpected "modules" (expected
 * version, constraints, hashes or })`.
 */
export function parseLockFile(text: string): LockFileResult {
  if (text.length > LOCK_FILE_MAX_CHARS)
    return { ok: false, problem: `the lock file is over ${LOCK_FILE_MAX_CHARS} characters` };
  const providers: LockedProvider[] = [];
  const seen = new Set<string>();
  let cur: (Partial<LockedProvider> & { hashes: string[]; line: number; keys: Set<string> }) | null = null;
  let inHashes = false;
  let lineNo = 0;
  const fail = (problem: string): LockFileResult => ({ ok: false, problem: `line ${lineNo}: ${problem}` });
  let start = 0;
  while (start <= text.length) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    const line = text.slice(start, end);
    start = end + 1;
    lineNo++;
    const toks = tokenize(line);
    if (typeof toks === 'string') return fail(toks);
    let i = 0;
    while (i < toks.length) {
      const tok = toks[i]!;
      if (inHashes && cur) {
        if (tok.t === ']') {
          inHashes = false;
          i++;
          continue;
        }
        if (tok.t !== 'str') return fail(`unexpected ${show(tok)} in hashes (expected "<hash>", or ])`);
        if (!isHash(tok.v))
          return fail(`"${tok.v.slice(0, 80)}" is not a provider hash (expected "h1:…" or "zh:<64 hex>")`);
        if (cur.hashes.length >= LOCK_FILE_MAX_HASHES)
          return fail(`provider "${cur.address}" has over ${LOCK_FILE_MAX_HASHES} hashes`);
        cur.hashes.push(tok.v);
        i++;
        if (toks[i]?.t === ',') i++;
        else if (toks[i] && toks[i]!.t !== ']') return fail(`unexpected ${show(toks[i])} (expected , or ])`);
        continue;
      }
      if (!cur) {
        if (tok.t !== 'id' || tok.v !== 'provider')
          return fail(`unexpected ${show(tok)} (expected provider "<host>/<namespace>/<type>" {)`);
        const addr = toks[i + 1];
        if (addr?.t !== 'str' || toks[i + 2]?.t !== '{')
          return fail(
            `unexpected ${show(addr?.t === 'str' ? toks[i + 2] : addr)} (expected provider "<address>" {)`,
          );
        if (!parseProviderAddress(addr.v))
          return fail(
            `"${addr.v.slice(0, 120)}" is not a provider address (expected "<host>/<namespace>/<type>")`,
          );
        if (seen.has(addr.v)) return fail(`provider "${addr.v}" is locked twice`);
        if (providers.length >= LOCK_FILE_MAX_PROVIDERS)
          return fail(`over ${LOCK_FILE_MAX_PROVIDERS} providers in one lock file`);
        seen.add(addr.v);
        cur = { address: addr.v, hashes: [], line: lineNo, keys: new Set() };
        i += 3;
        continue;
      }
      if (tok.t === '}') {
        if (!cur.version) return fail(`provider "${cur.address}" has no version (expected version = "…")`);
        providers.push({
          address: cur.address!,
          version: cur.version,
          ...(cur.constraints !== undefined ? { constraints: cur.constraints } : {}),
          hashes: cur.hashes,
        });
        cur = null;
        i++;
        continue;
      }
      const key = tok.v;
      if (tok.t !== 'id' || !['version', 'constraints', 'hashes'].includes(key))
        return fail(`unexpected ${show(tok)} (expected version, constraints, hashes or })`);
      if (toks[i + 1]?.t !== '=') return fail(`unexpected ${show(toks[i + 1])} after ${key} (expected =)`);
      if (cur.keys.has(key)) return fail(`${key} is set twice in provider "${cur.address}"`);
      cur.keys.add(key);
      const val = toks[i + 2];
      if (key === 'hashes') {
        if (val?.t !== '[') return fail(`unexpected ${show(val)} after hashes = (expected [)`);
        inHashes = true;
        i += 3;
        continue;
      }
      if (val?.t !== 'str') return fail(`unexpected ${show(val)} after ${key} = (expected "…")`);
      if (key === 'version') {
        if (!VERSION.test(val.v))
          return fail(`"${val.v.slice(0, 80)}" is not a provider version (expected e.g. "5.31.0")`);
        cur.version = val.v;
      } else {
        if (val.v.length > 500) return fail('constraints over 500 characters');
        cur.constraints = val.v;
      }
      i += 3;
    }
  }
  if (text.endsWith('\n')) lineNo--; // the empty "line" after the last newline
  if (cur)
    return fail(
      `the provider block opened on line ${cur.line} is not closed (expected ${inHashes ? '] and }' : '}'})`,
    );
  return { ok: true, providers };
}
