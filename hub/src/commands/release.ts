import { spawnSync } from 'node:child_process';
import { createReadStream, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { PublicationInfoSchema } from '@driftline/protocol';
import type { Command } from 'commander';
import { fmtBytes } from './publication.js';
import { remoteAction, remoteHub, remoteOptions } from './remote.js';

/** `driftline-edge-<version>-linux-<arch>.tar.gz`, as `npm run package` names it. */
const RELEASE_NAME = /^driftline-edge-(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]{1,40})?)-linux-(x64|arm64)\.tar\.gz$/;
/** `uname -m` of each tarball CPU, as the package's launcher compares it. */
const UNAME: Record<string, string> = { x64: 'x86_64', arm64: 'aarch64' };

/**
 * Why `file` is not a release tarball fit to send, or null when it is: the name `npm run package`
 * gives, a VERSION that agrees with it, a launcher for the CPU it names, and every file matching
 * SHA256SUMS. Checked in a scratch folder (GNU tar and sha256sum), removed afterwards.
 */
export function releaseTarballProblem(file: string): string | null {
  const m = RELEASE_NAME.exec(basename(file));
  if (!m)
    return `${basename(file)} is not named as npm run package names a release (driftline-edge-<version>-linux-<x64|arm64>.tar.gz)`;
  const [, version, arch] = m as unknown as [string, string, string];
  const dir = mkdtempSync(join(tmpdir(), 'driftline-release-'));
  try {
    const untar = spawnSync('tar', ['-xzf', file, '-C', dir, '--no-same-owner'], { encoding: 'utf8' });
    if (untar.status !== 0)
      return `tar cannot unpack it (${(untar.stderr || untar.error?.message || '').trim().split('\n')[0]})`;
    let v: string;
    try {
      v = readFileSync(join(dir, 'VERSION'), 'utf8').trim();
    } catch {
      return 'it has no VERSION file: not a driftline-edge package';
    }
    if (v !== version) return `its VERSION says ${v}, its name says ${version}`;
    let launcher = '';
    try {
      launcher = readFileSync(join(dir, 'bin', 'edge-agent'), 'utf8');
    } catch {
      return 'it has no bin/edge-agent launcher: not a driftline-edge package';
    }
    const built = /^build_arch='([^']*)'$/m.exec(launcher)?.[1];
    if (built !== UNAME[arch]) return `its launcher is for ${built ?? 'no CPU'}, its name says linux-${arch}`;
    const sums = spawnSync('sha256sum', ['-c', '--strict', '--quiet', 'SHA256SUMS'], {
      cwd: dir,
      encoding: 'utf8',
    });
    if (sums.status !== 0)
      return `its files do not match SHA256SUMS: ${(sums.stdout + sums.stderr).trim().split('\n')[0]}`;
    return null;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `hub release publish`: an offline package of the agent, to sites as an `agent-release` publication. */
export function addReleaseVerbs(program: Command): void {
  const release = program
    .command('release')
    .description('send sites a newer edge agent (the offline package npm run package builds)');
  remoteOptions(
    release
      .command('publish')
      .description(
        'check a release tarball (name, VERSION, CPU, SHA256SUMS) and queue it to sites as an agent-release publication; agents with releases.install unpack it next to the running version',
      )
      .argument('<tarball>', 'dist/driftline-edge-<version>-linux-<arch>.tar.gz')
      .requiredOption('--site <sites>', "target site id(s), comma-separated, or 'all'")
      .option('--ttl <seconds>', 'expire at relays and sites after this long')
      .option('--json', 'machine-readable output'),
  )
    .addHelpText(
      'after',
      `
The token needs the publisher role. Nothing is sent when the tarball is misnamed or its files do not
match its SHA256SUMS. A site takes it only if its agent.yaml says releases.install: true, and runs it
only after a switch (releases.switch: true, or the operator repointing <releases.dir>/current).

Example:
  npm run package
  hub release publish dist/driftline-edge-0.2.0-linux-x64.tar.gz --site all \\
    --hub https://hq.example.org:8080 --token-file ~/.driftline/publisher.token`,
    )
    .exitOverride()
    .action((file: string, o) => remoteAction('release publish', () => publish(file, o)));
}

async function publish(
  file: string,
  o: { site: string; ttl?: string; json?: boolean; hub?: string; tokenFile?: string },
): Promise<number> {
  const st = statSync(file, { throwIfNoEntry: false });
  if (!st?.isFile()) throw new Error(`${file} is not a file`);
  const problem = releaseTarballProblem(file);
  if (problem) throw new Error(`${file}: ${problem}; nothing was sent`);
  const hub = remoteHub(o);
  const name = basename(file);
  const q = new URLSearchParams({
    site: o.site,
    name,
    kind: 'agent-release',
    ...(o.ttl ? { ttl: o.ttl } : {}),
  });
  const b = await hub.upload(
    `/api/publications?${q}`,
    createReadStream(file),
    st.size,
    PublicationInfoSchema.passthrough(),
  );
  // `bundleId` repeats `publicationId` for scripts written before decision 170 (one version).
  if (o.json) console.log(JSON.stringify({ ...b, bundleId: b.publicationId }));
  else
    console.log(
      `published ${name} (publication ${b.publicationId}, ${fmtBytes(b.size)}, sha256 ${b.sha256}) to ${b.sites.join(', ')}`,
    );
  return 0;
}
