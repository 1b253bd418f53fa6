import { createHash } from 'node:crypto';
import { createReadStream, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import {
  isTerraformPlatform,
  LOCK_FILE_MAX_CHARS,
  type LockedProvider,
  PublicationInfoSchema,
  packedZipPath,
  parseLockFile,
  providerBuild,
  SourcesResponseSchema,
  zipHashes,
} from '@driftline/protocol';
import type { Command } from 'commander';
import { fmtBytes } from './publication.js';
import { remoteAction, remoteHub, remoteOptions } from './remote.js';

/** A provider build the lock file needs for a platform, and its zip in `--dir`. */
interface Wanted {
  build: string;
  provider: LockedProvider;
  platform: string;
  /** Path relative to the mirror: the publication's name, and where the site places it. */
  name: string;
  file: string;
}

/** `hub mirror publish`: the provider zips a lock file needs that sites lack, from a `terraform providers mirror` directory. */
export function addMirrorVerbs(program: Command): void {
  const mirror = program
    .command('mirror')
    .description('publish Terraform provider packages to sites (run where the mirror is, e.g. a CI job)');
  remoteOptions(
    mirror
      .command('publish')
      .description(
        "send each site the provider builds the lock file needs for its platform that it has not reported having, checked against the lock file's zh: hashes",
      )
      .requiredOption(
        '--lock-file <file>',
        'the .terraform.lock.hcl naming the providers, versions and hashes',
      )
      .requiredOption(
        '--dir <dir>',
        'output of `terraform providers mirror` (packed layout: host/ns/type/*.zip)',
      )
      .requiredOption('--site <sites>', "target site id(s), comma-separated, or 'all'")
      .option(
        '--platform <os_arch>',
        "platform to send (repeat or comma-separate); default each site's reported platforms",
        (v: string, acc: string[]) => [...acc, ...v.split(',').map((s) => s.trim())],
        [] as string[],
      )
      .option('--ttl <seconds>', 'expire at relays and sites after this long')
      .option('--json', 'machine-readable output'),
  )
    .addHelpText(
      'after',
      `
The token needs the publisher role (hub user add ci --role publisher). Nothing is sent when the lock
file does not parse, a zip is missing, or a zip's sha256 is not among the lock file's zh: hashes.

Example:
  terraform providers lock -platform=linux_amd64 && terraform providers mirror -platform=linux_amd64 ./mirror
  hub mirror publish --lock-file .terraform.lock.hcl --dir ./mirror --site ship-7 \\
    --hub https://hq.example.org:8080 --token-file ~/.driftline/publisher.token`,
    )
    .exitOverride()
    .action((o) => remoteAction('mirror publish', () => publish(o)));
}

async function sha256File(path: string): Promise<string> {
  const h = createHash('sha256');
  for await (const c of createReadStream(path)) h.update(c as Buffer);
  return h.digest('hex');
}

function readLock(path: string): LockedProvider[] {
  let text: string;
  try {
    if (statSync(path).size > LOCK_FILE_MAX_CHARS) throw new Error(`it is over ${LOCK_FILE_MAX_CHARS} bytes`);
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new Error(
      `cannot read --lock-file ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
    );
  }
  const lock = parseLockFile(text);
  if (!lock.ok) throw new Error(`--lock-file ${path} does not parse: ${lock.problem}`);
  if (lock.providers.length === 0)
    throw new Error(`--lock-file ${path} locks no provider: nothing to publish`);
  return lock.providers;
}

async function publish(o: {
  lockFile: string;
  dir: string;
  site: string;
  platform: string[];
  ttl?: string;
  json?: boolean;
  hub?: string;
  tokenFile?: string;
}): Promise<number> {
  const providers = readLock(o.lockFile);
  const dir = resolve(o.dir);
  if (!statSync(dir, { throwIfNoEntry: false })?.isDirectory())
    throw new Error(`--dir ${o.dir} is not a directory (give the output of \`terraform providers mirror\`)`);
  const bad = o.platform.find((p) => !isTerraformPlatform(p));
  if (bad !== undefined)
    throw new Error(`--platform ${JSON.stringify(bad)} is not <os>_<arch> (e.g. linux_amd64)`);
  const hub = remoteHub(o);
  const all = o.site.trim() === 'all';
  const sources = await hub.json(
    'GET',
    `/api/sources${all ? '' : `?site=${encodeURIComponent(o.site)}`}`,
    SourcesResponseSchema,
  );
  const sites = all
    ? sources.sites.map((s) => s.site as string)
    : o.site
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
  if (sites.length === 0)
    throw new Error('no site to publish to (no site has reported yet; name them with --site)');

  // Which builds each site lacks; every check runs before the first byte is sent.
  const wanted = new Map<string, Wanted & { sites: string[] }>();
  const skipped: { build: string; site: string }[] = [];
  for (const site of sites) {
    const s = sources.sites.find((x) => x.site === site);
    const platforms = o.platform.length ? o.platform : (s?.platforms ?? []);
    if (platforms.length === 0)
      throw new Error(`site ${site} has not reported its platform yet: give --platform (e.g. linux_amd64)`);
    for (const platform of platforms)
      for (const p of providers) {
        const build = providerBuild(p.address, p.version, platform);
        if (s?.providers.includes(build)) {
          skipped.push({ build, site });
          continue;
        }
        const name = packedZipPath(p.address, p.version, platform);
        const w = wanted.get(build) ?? {
          build,
          provider: p,
          platform,
          name,
          file: join(dir, name),
          sites: [],
        };
        w.sites.push(site);
        wanted.set(build, w);
      }
  }
  const checked: (Wanted & { sites: string[]; size: number; sha256: string })[] = [];
  for (const w of wanted.values()) {
    const st = statSync(w.file, { throwIfNoEntry: false });
    if (!st?.isFile())
      throw new Error(
        `${w.build}: ${w.file} is missing (run \`terraform providers mirror -platform=${w.platform} ${o.dir}\`)`,
      );
    const zh = zipHashes(w.provider);
    if (zh.length === 0)
      throw new Error(
        `${w.build}: the lock file has no zh: hashes for ${w.provider.address}, so the zip cannot be checked (run \`terraform providers lock -platform=${w.platform}\`)`,
      );
    const sha256 = await sha256File(w.file);
    if (!zh.includes(sha256))
      throw new Error(
        `${w.build}: ${w.file} has sha256 ${sha256}, which is not among the lock file's zh: hashes for it: refusing to send it (rebuild the mirror from this lock file)`,
      );
    checked.push({ ...w, size: st.size, sha256 });
  }

  const published: {
    build: string;
    sites: string[];
    publicationId: string;
    /** `publicationId` again, for scripts written before decision 170 (one version). */
    bundleId: string;
    size: number;
    sha256: string;
  }[] = [];
  for (const w of checked) {
    const q = new URLSearchParams({
      site: w.sites.join(','),
      name: w.name,
      kind: 'provider-mirror',
      ...(o.ttl ? { ttl: o.ttl } : {}),
    });
    const p = await hub.upload(
      `/api/publications?${q}`,
      createReadStream(w.file),
      w.size,
      PublicationInfoSchema.passthrough(),
    );
    published.push({
      build: w.build,
      sites: w.sites,
      publicationId: p.publicationId,
      bundleId: p.publicationId,
      size: w.size,
      sha256: w.sha256,
    });
    if (!o.json)
      for (const site of w.sites)
        console.log(`published ${w.build} → ${site} (publication ${p.publicationId}, ${fmtBytes(w.size)})`);
  }
  if (o.json) console.log(JSON.stringify({ published, skipped }));
  else for (const s of skipped) console.log(`skipped ${s.build} → ${s.site}: the site reported having it`);
  return 0;
}
