import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import {
  PublicationInfoSchema,
  PublicationsResponseSchema,
  SourcesResponseSchema,
} from '@driftline/protocol';
import type { Command } from 'commander';
import { fmtBytes } from './publication.js';
import { type RemoteHub, remoteAction, remoteHub, remoteOptions } from './remote.js';
import { createBundle, knownCommits, selectBranches } from './sourceBundle.js';

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;

/** One publication: the sites that get the same git bundle (they hold the same commits). */
interface Group {
  sites: string[];
  prerequisites: string[];
}

/**
 * Whether the site's last git bundle of `name` was refused for missing prerequisites: then the next one
 * is full (the site's reported heads are not what its mirror holds).
 */
async function needsFull(hub: RemoteHub, site: string, name: string): Promise<boolean> {
  const list = await hub.json(
    'GET',
    `/api/publications?site=${encodeURIComponent(site)}`,
    PublicationsResponseSchema,
  );
  const last = list.publications
    .filter((p) => p.fileKind === 'git' && p.name === name)
    .sort((a, b) => b.publishedAt.localeCompare(a.publishedAt))[0];
  const d = last?.deliveries?.find((x) => x.site === site);
  return d?.state === 'refused' && /prerequisite/i.test(d.reason ?? '');
}

/** `hub source publish`: the commits each site lacks, as incremental git bundles, to the hub over HTTP. */
export function addSourceVerbs(program: Command): void {
  const source = program
    .command('source')
    .description('publish source code to sites as git bundles (run where the repository is, e.g. a CI job)');
  remoteOptions(
    source
      .command('publish')
      .description(
        'send each site the commits of the chosen branches it lacks (an incremental git bundle on the heads it reported)',
      )
      .requiredOption('--repo <path>', 'the git repository (a clone with the branches to send)')
      .option(
        '--ref <pattern>',
        'branch to send; * matches anything (repeat: --ref main --ref "pr/*")',
        (v: string, acc: string[]) => [...acc, v],
        [] as string[],
      )
      .requiredOption('--site <sites>', "target site id(s), comma-separated, or 'all'")
      .option(
        '--name <name>',
        'repository name the sites know it by (components[].source.repo); default the folder name',
      )
      .option('--full', 'send every commit, whatever the sites reported')
      .option(
        '--inline',
        'a bundle of at most 4 KiB travels inside its announcement to every site, with no fetch (an agent older than decision 360 refuses it); default: to the sites whose agents all say they read it',
      )
      .option('--no-inline', 'never inside the announcement: every site fetches the bundle')
      .option('--ttl <seconds>', 'expire at relays and sites after this long')
      .option('--json', 'machine-readable output'),
  )
    .addHelpText(
      'after',
      `
The token needs the publisher role (hub user add ci --role publisher). A site whose mirror lacks a
bundle's prerequisites refuses it and reports why; the next publish then sends it a full bundle.

Example:
  hub source publish --repo . --ref main --ref 'pr/*' --site ship-7 \\
    --hub https://hq.example.org:8080 --token-file ~/.driftline/publisher.token`,
    )
    .exitOverride()
    .action((o) => remoteAction('source publish', () => publish(o)));
}

async function publish(o: {
  repo: string;
  ref: string[];
  site: string;
  name?: string;
  full?: boolean;
  inline?: boolean;
  ttl?: string;
  json?: boolean;
  hub?: string;
  tokenFile?: string;
}): Promise<number> {
  const repo = resolve(o.repo);
  const name = o.name ?? basename(repo).replace(/\.git$/, '');
  if (!NAME.test(name))
    throw new Error(
      `--name ${JSON.stringify(name)}: 1-63 letters, digits, '.', '_' or '-' (as in components[].source.repo)`,
    );
  const patterns = o.ref.length > 0 ? o.ref : ['main'];
  const selected = await selectBranches(repo, patterns);
  if (!selected.ok) throw new Error(selected.problem);
  const hub = remoteHub(o);
  const wanted = o.site.trim() === 'all' ? '' : `?site=${encodeURIComponent(o.site)}`;
  const sources = await hub.json('GET', `/api/sources${wanted}`, SourcesResponseSchema);
  const sites =
    o.site.trim() === 'all'
      ? sources.sites.map((s) => s.site)
      : o.site
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean);
  if (sites.length === 0)
    throw new Error('no site to publish to (no site has reported yet; name them with --site)');
  const groups = new Map<string, Group>();
  const upToDate: string[] = [];
  for (const site of sites) {
    const heads = sources.sites.find((s) => s.site === site)?.repos[name] ?? {};
    const full = o.full || (await needsFull(hub, site, name));
    if (!full && Object.entries(selected.branches).every(([b, sha]) => heads[b] === sha)) {
      upToDate.push(site);
      continue;
    }
    const prerequisites = full ? [] : await knownCommits(repo, heads);
    const key = prerequisites.join(',');
    const g = groups.get(key) ?? { sites: [], prerequisites };
    g.sites.push(site);
    groups.set(key, g);
  }
  const tmp = mkdtempSync(join(tmpdir(), 'driftline-source-'));
  const published: object[] = [];
  try {
    for (const [i, g] of [...groups.values()].entries()) {
      const file = join(tmp, `${i}.bundle`);
      const made = await createBundle(repo, file, Object.keys(selected.branches), g.prerequisites);
      if (!made.ok) throw new Error(made.problem);
      if (!made.created) {
        upToDate.push(...g.sites);
        continue;
      }
      const size = statSync(file).size;
      const q = new URLSearchParams({
        site: g.sites.join(','),
        name,
        kind: 'git',
        ...(o.ttl ? { ttl: o.ttl } : {}),
        ...(o.inline === undefined ? {} : { inline: o.inline ? '1' : '0' }),
      });
      const p = await hub.upload(
        `/api/publications?${q}`,
        await readFile(file),
        size,
        PublicationInfoSchema.passthrough(),
      );
      const what = g.prerequisites.length > 0 ? `incremental on ${g.prerequisites.length} commit(s)` : 'full';
      published.push({
        publicationId: p.publicationId,
        /** `publicationId` again, for scripts written before decision 170 (one version). */
        bundleId: p.publicationId,
        sites: g.sites,
        size,
        sha256: p.sha256,
        incremental: g.prerequisites.length > 0,
        prerequisites: g.prerequisites,
      });
      if (!o.json)
        console.log(
          `published ${p.publicationId} ${name} (git, ${fmtBytes(size)}, ${what}) to ${g.sites.join(', ')}`,
        );
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  if (o.json) console.log(JSON.stringify({ repo: name, branches: selected.branches, published, upToDate }));
  else if (upToDate.length > 0)
    console.log(`up to date: ${upToDate.join(', ')} (hold ${Object.keys(selected.branches).join(', ')})`);
  return 0;
}
