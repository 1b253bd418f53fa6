import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BlobManifest } from '@driftline/protocol';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { CliGitMirror } from '../src/adapters/git/CliGitMirror.js';
import { providerSink } from '../src/adapters/providers/providerSink.js';
import { writeZip } from '../src/adapters/providers/testZip.js';
import { FsPublicationFiles } from '../src/adapters/publications/FsPublicationFiles.js';
import { HttpBlobSource } from '../src/adapters/publications/HttpBlobSource.js';
import { SqlitePublicationLedger } from '../src/adapters/publications/SqlitePublicationLedger.js';
import { gitSink } from '../src/adapters/sources/gitSink.js';
import type { AgentConfig } from '../src/config.js';
import { PublicationReceiver } from '../src/core/publications/PublicationReceiver.js';

const cleanup: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0)) await f();
});

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** Serves blobs at `/v1/blobs/:sha256` with Range, counting requests. */
async function blobs(files: Buffer[]) {
  const byHash = new Map(files.map((b) => [sha(b), b]));
  const stats = { requests: 0 };
  const server: Server = createServer((req, res) => {
    stats.requests++;
    const data = byHash.get(req.url?.split('/').pop() ?? '');
    if (!data) return void res.writeHead(404).end();
    const m = /bytes=(\d+)-(\d*)/.exec(req.headers.range ?? '');
    const start = m ? Number(m[1]) : 0;
    const end = m?.[2] ? Math.min(Number(m[2]), data.length - 1) : data.length - 1;
    res.writeHead(m ? 206 : 200, { 'content-length': end - start + 1 });
    res.end(data.subarray(start, end + 1));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanup.push(() => new Promise<void>((r) => server.close(() => r())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, stats };
}

function setup(url: string) {
  const dir = mkdtempSync(join(tmpdir(), 'agent-sinks-'));
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  const db = new Database(join(dir, 'agent.sqlite'));
  cleanup.push(() => {
    db.close();
  });
  const files = new FsPublicationFiles(join(dir, 'partial'));
  const heads: Array<[string, Record<string, string>]> = [];
  const placed: string[] = [];
  const config = { components: [{ source: { repo: 'infra' } }] } as unknown as AgentConfig;
  const mirror = new CliGitMirror(join(dir, 'git'));
  const receiver = new PublicationReceiver({
    ledger: new SqlitePublicationLedger(db),
    files,
    source: new HttpBlobSource([{ url, token: 't' }]),
    policy: { accept: { 'provider-mirror': { dir: join(dir, 'providers') } }, quotaBytes: 1 << 30 },
    sinks: {
      git: gitSink(config, mirror, (repo, updated) => heads.push([repo, updated])),
      'provider-mirror': providerSink(join(dir, 'providers'), files, (p) => placed.push(p)),
    },
    now: () => 1,
    onStates: () => {},
    log: { info: () => {}, warn: () => {} },
  });
  return { dir, receiver, heads, placed, mirror };
}

let ids = 0;
const manifest = (data: Buffer, name: string, fileKind: string): BlobManifest => ({
  sha256: sha(data) as BlobManifest['sha256'],
  size: data.length,
  contentType: 'application/octet-stream',
  name,
  fileKind,
  bundleId: `01JW00000000000000000000${String(++ids).padStart(2, '0')}`,
});

async function settle(r: PublicationReceiver) {
  for (let i = 0; i < 20; i++) if (!(await r.step())) return;
}

function gitBundle(): { bundle: Buffer; head: string } {
  const d = mkdtempSync(join(tmpdir(), 'agent-sinks-src-'));
  cleanup.push(() => rmSync(d, { recursive: true, force: true }));
  const git = (...a: string[]) =>
    execFileSync('git', ['-c', 'user.email=a@b', '-c', 'user.name=a', ...a], {
      cwd: d,
      encoding: 'utf8',
    }).trim();
  git('init', '-q', '-b', 'main');
  writeFileSync(join(d, 'main.tf'), '#\n');
  git('add', '.');
  git('commit', '-qm', 'one');
  git('bundle', 'create', join(d, 'b.bundle'), 'main');
  return { bundle: readFileSync(join(d, 'b.bundle')), head: git('rev-parse', 'HEAD') };
}

describe('publication kinds taken by a sink (git mirrors, provider mirrors)', () => {
  it('fetches a git bundle into the mirror and refuses one for a repository no component plans, unfetched', async () => {
    const { bundle, head } = gitBundle();
    const srv = await blobs([bundle]);
    const s = setup(srv.url);
    const other = manifest(bundle, 'secrets-repo', 'git');
    s.receiver.announce(other);
    expect(s.receiver.states()[other.bundleId as string]).toMatchObject({
      state: 'refused',
      reason: "repository 'secrets-repo' is not planned by any component here (components[].source.repo)",
    });
    await settle(s.receiver);
    expect(srv.stats.requests).toBe(0);
    const m = manifest(bundle, 'infra', 'git');
    s.receiver.announce(m);
    await settle(s.receiver);
    expect(s.receiver.states()[m.bundleId as string]).toMatchObject({ state: 'placed' });
    expect(s.heads).toEqual([['infra', { main: head }]]);
    expect(await s.mirror.heads('infra')).toEqual({ main: head });
    expect(readdirSync(join(s.dir, 'partial'))).toEqual([]);
  });

  it('fetches a git bundle its manifest carried inline into the mirror with real git, and no request', async () => {
    const { bundle, head } = gitBundle();
    const srv = await blobs([bundle]);
    const s = setup(srv.url);
    const m = { ...manifest(bundle, 'infra', 'git'), inline: bundle };
    s.receiver.announce(m);
    await settle(s.receiver);
    expect(s.receiver.states()[m.bundleId as string]).toMatchObject({ state: 'placed' });
    expect(await s.mirror.heads('infra')).toEqual({ main: head });
    expect(srv.stats.requests).toBe(0);
    // Inline bytes that are the signed sha256's but not a bundle: git refuses them, as fetched ones.
    const junk = Buffer.from('not a bundle at all');
    const bad = { ...manifest(junk, 'infra', 'git'), inline: junk };
    s.receiver.announce(bad);
    await settle(s.receiver);
    expect(s.receiver.states()[bad.bundleId as string]).toMatchObject({
      state: 'refused',
      reason: 'not a git bundle (git bundle verify refused it)',
    });
    expect(await s.mirror.heads('infra')).toEqual({ main: head });
    expect(srv.stats.requests).toBe(0);
  });

  it('refuses a file that is not a git bundle, with the reason, and leaves the mirror as it was', async () => {
    const junk = Buffer.from('not a bundle at all');
    const srv = await blobs([junk]);
    const s = setup(srv.url);
    const m = manifest(junk, 'infra', 'git');
    s.receiver.announce(m);
    await settle(s.receiver);
    expect(s.receiver.states()[m.bundleId as string]).toMatchObject({
      state: 'refused',
      reason: 'not a git bundle (git bundle verify refused it)',
    });
    expect(await s.mirror.heads('infra')).toEqual({});
  });

  it("places a packed provider zip at Terraform's mirror path, and refuses one escaping its directory or with a symlink", async () => {
    const good = writeZip([{ name: 'terraform-provider-aws_v5.31.0_x5', data: 'binary' }]);
    const escaping = writeZip([{ name: '../evil', data: 'x' }]);
    const link = writeZip([{ name: 'terraform-provider-null', symlinkTo: '/etc/passwd' }]);
    const srv = await blobs([good, escaping, link]);
    const s = setup(srv.url);
    const path = 'registry.terraform.io/hashicorp/aws/terraform-provider-aws_5.31.0_linux_amd64.zip';
    const ms = [
      manifest(good, path, 'provider-mirror'),
      manifest(escaping, path.replace('5.31.0', '5.32.0'), 'provider-mirror'),
      manifest(
        link,
        'registry.terraform.io/hashicorp/null/terraform-provider-null_3.2.2_linux_amd64.zip',
        'provider-mirror',
      ),
    ];
    for (const m of ms) s.receiver.announce(m);
    await settle(s.receiver);
    const states = s.receiver.states();
    expect(states[ms[0]?.bundleId as string]).toMatchObject({ state: 'placed' });
    expect(readFileSync(join(s.dir, 'providers', path)).equals(good)).toBe(true);
    expect(states[ms[1]?.bundleId as string]?.state).toBe('refused');
    expect(states[ms[1]?.bundleId as string]?.reason).toMatch(/^provider archive refused: .*\.\./);
    expect(states[ms[2]?.bundleId as string]?.reason).toMatch(/^provider archive refused: .*link/);
    expect(existsSync(join(s.dir, 'providers', 'registry.terraform.io/hashicorp/null'))).toBe(false);
    expect(s.placed).toEqual([join(s.dir, 'providers', path)]);
  });
});
