/**
 * relayCustody: one relay holding an outpost's custody while its upstream is away. 100 sites (20 with
 * `--quick`) each push signed uplink bundles (64 KiB doc-deltas, in batches as agents send them) and
 * upload blobs (1 MiB, tus) until the relay holds 1 GiB (100 MiB quick), half bundles, half blobs; then
 * the upstream comes back (a hop server that takes everything and keeps nothing) and the relay forwards
 * all of it. The relay is the offline package's `bin/relay` (built and unpacked once, cached:
 * scripts/package/unpacked.ts), or the source one under tsx with `DRIFTLINE_EDGE_PACKAGE=source`.
 *
 * Reports the relay's peak RSS (VmHWM, goal ≤ 150 MB) over the whole run and per phase, idle RSS
 * before the first byte, custody bytes on disk, and the fill and drain rates. Bounded in time: each
 * phase stops at its deadline and says how far it got (nothing is extrapolated).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createHopServer, type FinishedUpload, MemoryHopBackend, type Peer } from '@driftline/hop';
import { HopClient } from '@driftline/hop/client';
import {
  encodeBatch,
  encodeBundleBytes,
  encodeUlid,
  generateSigningKeyPair,
  type Receipt,
} from '@driftline/protocol';
import { openStore } from '@driftline/relay';
import { freePort } from '@driftline/simulation';
import { unpackedPackage } from '../../scripts/package/unpacked.js';
import { emit, isQuick, log, sleep, tmp } from '../lib/agent.js';

const SITES = isQuick ? 20 : 100;
const CUSTODY_BYTES = (isQuick ? 100 : 1024) * 1024 * 1024;
const BUNDLE_PAYLOAD = 64 * 1024;
const BUNDLES_PER_POST = 16;
const BLOB_BYTES = 1024 * 1024;
/** Sites pushing at once (agents do not all reach the relay together). */
const CONCURRENCY = 8;
const FILL_BOUND_MS = (isQuick ? 4 : 25) * 60_000;
const DRAIN_BOUND_MS = (isQuick ? 4 : 25) * 60_000;
const ROOT = join(import.meta.dirname, '..', '..');
const part = 'relayCustody';

const site = (i: number) => `site-${String(i).padStart(3, '0')}`;

/** CPU seconds a process has used (user + system), from /proc. */
function cpuSeconds(pid: number): number | null {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return (Number(f[11]) + Number(f[12])) / 100; // clock ticks; 100 per second on Linux
  } catch {
    return null;
  }
}

/** VmHWM and VmRSS of a process, MB. */
function rssOf(pid: number): { hwm: number; rss: number } | null {
  try {
    const s = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+) kB`).exec(s)?.[1] ?? 0);
    return { hwm: kb('VmHWM') / 1024, rss: kb('VmRSS') / 1024 };
  } catch {
    return null;
  }
}

function duBytes(dir: string): number {
  let n = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) n += duBytes(p);
    else if (e.isFile()) n += statSync(p).size;
  }
  return n;
}

/** An upstream that takes every bundle and blob and keeps only counts. */
class Sink extends MemoryHopBackend {
  bundles = 0;
  bundleBytes = 0;
  blobCount = 0;
  blobBytes = 0;
  override async accept(_p: Peer, bundles: readonly Uint8Array[]): Promise<Receipt[]> {
    return super.accept(_p, bundles).then((rs) => {
      for (const [i, r] of rs.entries())
        if (r.status === 'stored') {
          this.bundles++;
          this.bundleBytes += bundles[i]?.length ?? 0;
          if (r.bundleId) this.stored.delete(r.bundleId);
        }
      return rs;
    });
  }
  override async uploadFinished(_p: Peer | null, u: FinishedUpload): Promise<void> {
    this.blobCount++;
    this.blobBytes += u.size;
    rmSync(u.path, { force: true });
    rmSync(`${u.path}.json`, { force: true });
  }
}

const dir = tmp('relay-custody');
const pkg =
  process.env.DRIFTLINE_EDGE_PACKAGE === 'source'
    ? undefined
    : (process.env.DRIFTLINE_EDGE_PACKAGE ?? (await unpackedPackage({ log: (m) => log(part, m) })).dir);
const [relayPort, upPort] = [await freePort(), await freePort()];
const relayConfig = join(dir, 'relay.yaml');
const sites = Array.from({ length: SITES }, (_, i) => site(i));
const upToken = randomBytes(16).toString('hex');
writeFileSync(
  relayConfig,
  JSON.stringify({
    name: 'bench-relay',
    dataDir: join(dir, 'data'),
    listen: { port: relayPort },
    sites,
    upstreams: [{ url: `http://127.0.0.1:${upPort}`, token: upToken }],
    forward: { idleMs: 200, pullIntervalMs: 60_000, backoffBaseMs: 300, backoffMaxMs: 2000 },
  }),
);
// Tokens through the relay's own store, as `relay token add` writes them (100 CLI starts would take minutes).
const tokens: Record<string, string> = {};
{
  const store = openStore({ dataDir: join(dir, 'data'), storage: {} });
  for (const s of sites) tokens[s] = store.tokens.add(s, [s], 'peer');
  store.custody.close();
}

const relay: ChildProcess = pkg
  ? spawn(join(pkg, 'bin', 'relay'), ['run', '--config', relayConfig], {
      stdio: ['ignore', 'ignore', 'inherit'],
      env: { ...process.env, LOG_LEVEL: 'error' },
    })
  : spawn(process.execPath, [join(ROOT, 'relay/bin/relay.js'), 'run', '--config', relayConfig], {
      stdio: ['ignore', 'ignore', 'inherit'],
      env: { ...process.env, LOG_LEVEL: 'error' },
    });
const pid = relay.pid as number;
let peak = 0;
const sampler = setInterval(() => {
  const r = rssOf(pid);
  if (r) peak = Math.max(peak, r.hwm);
}, 200);
const stopRelay = async () => {
  clearInterval(sampler);
  if (relay.exitCode === null) {
    const done = new Promise((r) => relay.once('exit', r));
    relay.kill('SIGTERM');
    await done;
  }
};

try {
  const t0 = Date.now();
  for (let i = 0; i < 300; i++) {
    const ok = await fetch(`http://127.0.0.1:${relayPort}/v1/health`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (relay.exitCode !== null) throw new Error(`the relay exited ${relay.exitCode} at start`);
    await sleep(200);
  }
  await sleep(1000);
  const idleRssMb = rssOf(pid)?.rss ?? null;
  log(part, 'relay up', { packaged: !!pkg, startMs: Date.now() - t0, idleRssMb, sites: SITES });

  // ---- fill: every site pushes its share while the upstream is away
  const { privateKey } = await generateSigningKeyPair();
  const perSite = CUSTODY_BYTES / SITES;
  const bundlesPerSite = Math.max(1, Math.round(perSite / 2 / BUNDLE_PAYLOAD));
  const blobsPerSite = Math.max(1, Math.round(perSite / 2 / BLOB_BYTES));
  let sentBundles = 0;
  let sentBundleBytes = 0;
  let sentBlobs = 0;
  let sentBlobBytes = 0;
  let seq = 0;
  const fillStart = Date.now();
  const fillEnd = fillStart + FILL_BOUND_MS;
  const pushSite = async (s: string) => {
    const client = new HopClient({ url: `http://127.0.0.1:${relayPort}`, token: tokens[s] as string });
    for (let b = 0; b < bundlesPerSite && Date.now() < fillEnd; b += BUNDLES_PER_POST) {
      const batch: Uint8Array[] = [];
      for (let k = 0; k < Math.min(BUNDLES_PER_POST, bundlesPerSite - b); k++) {
        const id = encodeUlid(Date.now(), new Uint8Array(randomBytes(10)));
        const header = {
          id,
          kind: 'doc-delta' as const,
          source: { site: s, agent: 'a1' },
          destination: 'hub' as const,
          created: Date.now(),
          lifetimeS: 30 * 86_400,
          priority: 'status' as const,
          doc: `${s}/a1/${++seq}`,
        };
        batch.push(await encodeBundleBytes(header as never, randomBytes(BUNDLE_PAYLOAD), privateKey));
      }
      const r = await client.postBatch(encodeBatch(batch), { count: batch.length });
      if (!r.ok) throw new Error(`POST /v1/bundles for ${s}: ${r.message}`);
      const stored = r.value.receipts.filter((x) => x.status === 'stored').length;
      if (stored !== batch.length)
        throw new Error(`${s}: ${JSON.stringify(r.value.receipts.find((x) => x.status !== 'stored'))}`);
      sentBundles += stored;
      sentBundleBytes += batch.reduce((n, x) => n + x.length, 0);
    }
    for (let b = 0; b < blobsPerSite && Date.now() < fillEnd; b++) {
      const body = randomBytes(BLOB_BYTES);
      const sha256 = createHash('sha256').update(body).digest('hex');
      const r = await client.upload({
        sha256,
        size: body.length,
        body,
        metadata: { contentType: 'application/octet-stream' },
      });
      if (!r.ok) throw new Error(`upload for ${s}: ${r.message}`);
      sentBlobs++;
      sentBlobBytes += body.length;
    }
  };
  const queue = [...sites];
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (let s = queue.shift(); s; s = queue.shift()) await pushSite(s);
    }),
  );
  const fillMs = Date.now() - fillStart;
  const fillCpuS = cpuSeconds(pid);
  const fillPeak = peak;
  const custodyBytes = duBytes(join(dir, 'data'));
  const sentBytes = sentBundleBytes + sentBlobBytes;
  log(part, 'filled', {
    fillMs,
    sentBundles,
    sentBlobs,
    sentMb: sentBytes / 1048576,
    custodyMb: custodyBytes / 1048576,
    peakRssMb: fillPeak,
  });
  const heldRssMb = rssOf(pid)?.rss ?? null;

  // ---- drain: the upstream comes back and the relay forwards everything
  const sink = new Sink({ name: 'upstream', role: 'hub' });
  sink.addToken(upToken, { name: 'bench-relay', sites });
  const up = createHopServer(sink, { uploads: { directory: join(dir, 'up-uploads') } });
  await up.listen(upPort);
  const drainStart = Date.now();
  while (Date.now() - drainStart < DRAIN_BOUND_MS) {
    if (sink.bundles >= sentBundles && sink.blobCount >= sentBlobs) break;
    if (relay.exitCode !== null) throw new Error(`the relay exited ${relay.exitCode} while forwarding`);
    await sleep(250);
  }
  const drainMs = Date.now() - drainStart;
  const drainCpuS = (cpuSeconds(pid) ?? 0) - (fillCpuS ?? 0);
  const drained = sink.bundleBytes + sink.blobBytes;
  log(part, 'drained', {
    drainMs,
    bundles: sink.bundles,
    blobs: sink.blobCount,
    mb: drained / 1048576,
    peakRssMb: peak,
  });
  await up.close();
  await stopRelay();
  const mbps = (bytes: number, ms: number) => Math.round((bytes / 1048576 / (ms / 1000)) * 10) / 10;
  emit({
    sites: SITES,
    custodyMb: Math.round(custodyBytes / 1048576),
    bundles: sentBundles,
    blobs: sentBlobs,
    rssMb: Math.round(peak),
    idleRssMb: idleRssMb === null ? null : Math.round(idleRssMb),
    fillPeakRssMb: Math.round(fillPeak),
    heldRssMb: heldRssMb === null ? null : Math.round(heldRssMb),
    fillMBps: mbps(sentBytes, fillMs),
    bundlesPerSec: Math.round(sentBundles / (fillMs / 1000)),
    drainMBps: mbps(drained, drainMs),
    drainedAll: sink.bundles >= sentBundles && sink.blobCount >= sentBlobs,
    /** The relay's own CPU time in each phase (the machine's other work shows in the rates, not here). */
    relayCpuS: { fill: fillCpuS, drain: Math.round(drainCpuS * 10) / 10 },
    packaged: !!pkg,
  });
} finally {
  await stopRelay();
  rmSync(dir, { recursive: true, force: true });
}
