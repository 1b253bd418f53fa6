/**
 * sourceBundles: a few-line commit of a ~10 MB repository sent as an incremental git bundle by `hub source
 * publish` (hub → lan → relay → Mars link ×60 → agent, as processes). Measured: bytes over the Mars link
 * toward the site until the mirror holds the commit, and ms from the publish to the PR's plan at the hub.
 * Baselines in the same run: git's incremental bundle of the commit, a full bundle, a tarball of the tree.
 */
import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  BINS,
  FAKE_TERRAFORM_DIR,
  freePort,
  type LinkHandle,
  runProgram,
  startLink,
  waitForHttp,
} from '@driftline/simulation';
import { ProcessGroup, setUpHub } from '@driftline/simulation/testing';
import { emit, log, tmp, until } from '../lib/agent.js';
import { changeLines, gitFileBytes, makeRepo } from '../lib/gitRepo.js';
import { startH2Tap } from '../lib/h2Tap.js';
import { startHttpTap, type TappedResponse } from '../lib/httpTap.js';
import {
  agentLogLines,
  downlinkKinds,
  downlinkSampler,
  SOURCE_SETTINGS,
  v2AnswerKinds,
  v2AnswerShape,
  writeAgentConfig,
  writeRelayConfig,
} from '../lib/sourceSite.js';

const TIME_SCALE = 60;
const FILES = 200;
const FILE_BYTES = 50_000;
const WAIT_MS = 300_000;
/** `--no-inline`: publish without `--inline` (decision 360), so the bundle goes by its own Range fetch. */
const INLINE = !process.argv.includes('--no-inline');
/** `--wire=2`: the agent speaks hop v2 on h2c, and takes the compact manifest (decision 505). */
const WIRE = process.argv.includes('--wire=2') ? 2 : 1;
/** What the floor adds to git's bundle: one Ed25519 signature (issue 46). */
const SIGNATURE_BYTES = 64;
const dir = tmp('source');
const group = new ProcessGroup();
const links: LinkHandle[] = [];
let tap: Awaited<ReturnType<typeof startHttpTap>> | null = null;
let h2tap: Awaited<ReturnType<typeof startH2Tap>> | null = null;
let agent: ChildProcess | null = null;
const stopAll = async () => {
  if (agent && agent.exitCode === null) {
    const gone = new Promise((r) => agent?.once('exit', r));
    agent.kill('SIGTERM');
    await gone;
  }
  await group.stopAll();
  for (const l of links) await l.close();
  await tap?.close();
  await h2tap?.close();
  rmSync(dir, { recursive: true, force: true });
};
try {
  // 1. Sizes, with git alone.
  const repo = makeRepo(join(dir, 'infra'), FILES, FILE_BYTES);
  const prSha = changeLines(repo, 'pr/1', repo.files[17]!, 100, 3);
  const prMainSha = repo.mainSha;
  const file = (n: string) => join(dir, n);
  const gitIncremental = gitFileBytes(
    repo.dir,
    file('inc.bundle'),
    'bundle',
    'create',
    file('inc.bundle'),
    'pr/1',
    `^${prMainSha}`,
  );
  const gitFull = gitFileBytes(
    repo.dir,
    file('full.bundle'),
    'bundle',
    'create',
    file('full.bundle'),
    'main',
    'pr/1',
  );
  const tarball = gitFileBytes(
    repo.dir,
    file('tree.tgz'),
    'archive',
    '--format=tar.gz',
    '-o',
    file('tree.tgz'),
    'pr/1',
  );
  log('sourceBundles', 'git sizes', { treeBytes: repo.treeBytes, gitIncremental, gitFull, tarball });
  // The site first gets main alone: the PR branch waits until then.
  execFileSync('git', ['-C', repo.dir, 'checkout', '-q', 'main']);
  execFileSync('git', ['-C', repo.dir, 'branch', '-q', '-m', 'pr/1', 'later/pr-1']);

  // 2. Hub, relay and agent as processes, over the lan and Mars links.
  const [hubPort, relayPort] = [await freePort(), await freePort()];
  const hub = await setUpHub(dir, hubPort, { name: 'ground-1', sites: ['mars-base'] });
  const user = ['user', 'add', 'ci', '--role', 'publisher', '--config', hub.config, '--json'];
  const tokenFile = file('publisher.token');
  writeFileSync(tokenFile, (JSON.parse(await runProgram('hub', user)) as { token: string }).token);
  const hubRelay = await startLink({
    name: 'hub-relay',
    target: { port: hubPort },
    profile: 'lan',
    controlPort: false,
  });
  // Between the Mars link and the relay, a tap that sizes each response by request (bundle fetch or sync).
  tap = await startHttpTap(
    relayPort,
    undefined,
    (method, path) => method === 'GET' && path.startsWith('/v1/bundles'),
  );
  // hop v2's exchanges ride h2c: read as frames, each stream's bytes and body to the same list
  if (WIRE === 2) h2tap = await startH2Tap(relayPort, tap.port, tap.responses);
  const mars = await startLink({
    name: 'mars',
    target: { port: h2tap?.port ?? tap.port },
    profile: 'mars',
    timeScale: TIME_SCALE,
    controlPort: false,
  });
  links.push(hubRelay, mars);
  const marsSettings = mars.control.settings();
  const oneWayDelayMs = marsSettings.downlink.delayMs;
  // Up for the whole run (its contact window, 8 min of every 24.7 at this scale, is not what is measured);
  // main's full bundle goes out undelayed as a warm-up, the measured PR over the Mars delays.
  mars.control.force('up');
  mars.control.update({ uplink: { delayMs: 0 }, downlink: { delayMs: 0 } });

  const relayConfig = file('relay.yaml');
  writeRelayConfig(relayConfig, {
    dataDir: file('relay'),
    port: relayPort,
    site: 'mars-base',
    upstreamUrl: `http://127.0.0.1:${hubRelay.port}`,
    token: hub.relayToken,
  });
  const site = file('mars-base');
  mkdirSync(site, { recursive: true });
  const relayToken = ['token', 'add', 'mars-base', '--config', relayConfig, '--json'];
  writeFileSync(
    join(site, 'token'),
    (JSON.parse(await runProgram('relay', relayToken)) as { token: string }).token,
  );
  writeFileSync(join(site, 'hub.pub'), hub.key);
  const agentConfig = join(site, 'agent.yaml');
  writeAgentConfig(agentConfig, {
    site: 'mars-base',
    upstreamUrl: `http://127.0.0.1:${mars.port}`,
    wire: WIRE,
  });
  const init = JSON.parse(await runProgram('agent', ['init', '--config', agentConfig, '--json'])) as {
    publicKey: string;
  };
  await runProgram('hub', [
    'enroll',
    '--config',
    hub.config,
    '--site',
    'mars-base',
    '--agent',
    'a1',
    '--key',
    init.publicKey,
  ]);
  const hubProc = group.start(BINS.hub, ['run', '--config', hub.config]);
  await waitForHttp(`${hub.url}/v1/health`, 60_000, () => hubProc.exitCode === null);
  const relay = group.start(BINS.relay, ['run', '--config', relayConfig]);
  await waitForHttp(`http://127.0.0.1:${relayPort}/v1/health`, 60_000, () => relay.exitCode === null);
  const env = { PATH: `${FAKE_TERRAFORM_DIR}:${process.env.PATH}`, FAKE_TERRAFORM_NETWORK: '0' };
  // The agent's own log (info) says when the bundle reached its mirror and when the plan was recorded.
  const agentLog = join(site, 'agent.log');
  const logFd = openSync(agentLog, 'a');
  agent = spawn(process.execPath, [BINS.agent, 'run', '--config', agentConfig], {
    cwd: site,
    env: { ...process.env, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', logFd, logFd],
  });
  closeSync(logFd);
  // What crosses the Mars link toward the site, sampled: each burst is about one HTTP response.
  const sampler = downlinkSampler(mars);

  const json = async <T>(path: string): Promise<T | null> => {
    const r = await hub.api(path).catch(() => null);
    return r?.ok ? ((await r.json()) as T) : null;
  };
  const reported = async () =>
    (
      await json<{
        sites: Array<{ site: string; platforms: string[]; repos: Record<string, Record<string, string>> }>;
      }>('/api/sources')
    )?.sites.find((s) => s.site === 'mars-base');
  const planned = async (ref: string) =>
    (
      await json<{ cells: Array<{ site: string; commit?: string | null }> }>(
        `/api/matrix?ref=${encodeURIComponent(ref)}`,
      )
    )?.cells.find((c) => c.site === 'mars-base')?.commit ?? null;
  const publish = () =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      const args = [
        'source',
        'publish',
        '--repo',
        repo.dir,
        '--ref',
        'main',
        '--ref',
        'pr/*',
        '--site',
        'mars-base',
      ];
      const remote = ['--name', 'infra', '--json', '--hub', hub.url, '--token-file', tokenFile];
      if (INLINE) remote.push('--inline');
      execFile(
        process.execPath,
        [BINS.hub, ...args, ...remote],
        { timeout: WAIT_MS },
        (err, stdout, stderr) =>
          resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
    });
  const mirrorHas = (sha: string) =>
    new Promise<boolean>((resolve) =>
      execFile(
        'git',
        [
          '--git-dir',
          join(site, 'data/git/infra.git'),
          'rev-parse',
          '-q',
          '--verify',
          'refs/remotes/hq/pr/1',
        ],
        (err, out) => resolve(!err && out.trim() === sha),
      ),
    );
  const must = async (what: string, cond: () => Promise<boolean>) => {
    if (!(await until(cond, WAIT_MS, 200))) throw new Error(`timed out waiting for ${what}`);
  };

  // Sync responses (v1's downlink pages, every hop v2 answer) reach the site one way after the tap saw them.
  const isSync = (r: { path: string }) => r.path.startsWith('/v1/bundles') || r.path === '/v2';
  const kindsOf = (r: TappedResponse) => (r.path === '/v2' ? v2AnswerKinds(r) : downlinkKinds(r));
  // Warm-up: main as a full bundle over the undelayed link, planned on arrival, its head reported.
  await must(
    'the agent to report its (empty) sources',
    async () => ((await reported())?.platforms.length ?? 0) > 0,
  );
  const first = await publish();
  if (first.code !== 0)
    throw new Error(`hub source publish (main) exited ${first.code}: ${first.stderr.trim()}`);
  const firstOut = JSON.parse(first.stdout) as { published: Array<{ size: number; incremental: boolean }> };
  await must('main to be planned', async () => (await planned('main')) === prMainSha);
  await must('the site to report main', async () => (await reported())?.repos.infra?.main === prMainSha);
  log('sourceBundles', 'warm-up done: main delivered (full bundle) and planned', {
    fullPublished: firstOut.published[0],
  });

  // Mars delays from here; the link settles (requests in flight drain) before the publish.
  mars.control.update({ uplink: { delayMs: oneWayDelayMs }, downlink: { delayMs: oneWayDelayMs } });
  // Settled: for two round trips nothing but sync polls (the warm-up's detail uploads are done).
  const rtt = 2 * oneWayDelayMs;
  const settled = await until(
    () => {
      const busy = tap!.responses.filter((r) => !isSync(r) || kindsOf(r).includes('custody'));
      const last = busy.at(-1)?.start ?? 0;
      return performance.now() - last > 2 * rtt + 2000;
    },
    WAIT_MS,
    500,
  );
  if (!settled) log('sourceBundles', 'the link did not settle (still uploads or pushes); measuring anyway');

  // The PR: only its commit should cross the link.
  execFileSync('git', ['-C', repo.dir, 'branch', '-q', '-m', 'later/pr-1', 'pr/1']);
  const down0 = mars.stats().downlink.bytes;
  const hubDown0 = hubRelay.stats().downlink.bytes;
  const t0 = performance.now();
  const wall0 = Date.now();
  const second = await publish();
  if (second.code !== 0)
    throw new Error(`hub source publish (pr/1) exited ${second.code}: ${second.stderr.trim()}`);
  const publishedMs = performance.now() - t0;
  const out = JSON.parse(second.stdout) as {
    published: Array<{ size: number; incremental: boolean; prerequisites: string[] }>;
  };
  const pub = out.published[0];
  if (!pub?.incremental)
    throw new Error(`the PR went out as ${JSON.stringify(out.published)}, not one incremental bundle`);
  let inMirrorMs: number | null = null;
  let linkBytes: number | null = null;
  const planWait = until(async () => (await planned('pr/1')) === prSha, WAIT_MS, 100);
  const mirrorWait = until(() => mirrorHas(prSha), WAIT_MS, 100).then((ok) => {
    if (!ok) return;
    inMirrorMs = performance.now() - t0;
    linkBytes = mars.stats().downlink.bytes - down0;
  });
  const [planOk] = await Promise.all([planWait, mirrorWait]);
  const planMs = planOk ? performance.now() - t0 : null;
  // The hub → relay link (lan) toward the relay, from the publish until the plan reached the hub: the
  // relay's pulls and, without an inline manifest, its own Range fetch of the bundle (decision 360).
  const hubRelayBytes = hubRelay.stats().downlink.bytes - hubDown0;
  if (linkBytes === null || inMirrorMs === null) throw new Error('the PR commit never reached the mirror');
  const tEnd = t0 + (inMirrorMs as number);
  // What the commit cost toward the site: every response that reached the site between the publish and
  // the mirror holding the commit (it left the tap one way earlier), sorted by what it carried. Held pulls
  // (decisions 320, 340) hold the announcement's answer open at the relay; a held pull answered early
  // with it restarts its lane's hold, so over a day it replaces no empty answer: its every byte counts.
  //   announcement: downlink answers carrying the publication's manifest (with the bundle, if inline),
  //                 and copies of it until the plan reached the hub
  //   bundle fetch: the Range responses of `GET /v1/blobs/<sha256>`
  //   reports: the rest (receipts of the site's own state reports, acks): caused by the commit too, but
  //            not delivering it; shown apart, not in the goal's ratio
  //   bare 304s: held pulls that ended empty, which happen with or without a commit: not counted
  // Heads and bodies as the relay sent them; TCP/IP below HTTP is not counted (the link's own
  // count, `linkBytes`, is everything it carried in the window, polling and retransmissions included).
  const inWindow = tap.responses.filter((r) => r.at > t0 - oneWayDelayMs && r.at <= tEnd - oneWayDelayMs);
  const carried = inWindow.map((r) => ({ r, kinds: isSync(r) ? kindsOf(r) : [] }));
  const sum = (xs: typeof carried) => xs.reduce((n, x) => n + x.r.bytes, 0);
  const fetches = carried.filter((x) => x.r.path.startsWith('/v1/blobs/'));
  // A second held pull sent before the first answer reached the site can carry the manifest again
  // (decision 340: bytes, not work): such copies until the plan reached the hub count as announcement too.
  const endTap = (planMs ?? inMirrorMs) + t0 - oneWayDelayMs;
  const copies = tap.responses
    .filter((r) => isSync(r) && r.at > tEnd - oneWayDelayMs && r.at <= endTap)
    .map((r) => ({ r, kinds: kindsOf(r) }))
    .filter((x) => x.kinds.includes('blob'));
  const announcements = [...carried.filter((x) => x.kinds.includes('blob')), ...copies];
  // bare: v1's 304, v2's 204
  const quiet = carried.filter((x) => x.r.status === 304 || x.r.status === 204);
  const reports = carried.filter(
    (x) => !fetches.includes(x) && !announcements.includes(x) && !quiet.includes(x),
  );
  const bundleFetchBytes = sum(fetches);
  const announceBytes = sum(announcements);
  const reportBytes = sum(reports);
  const pollingBytes = sum(quiet);
  const syncBytes = sum(carried.filter((x) => isSync(x.r)));
  const deliveryBytes = bundleFetchBytes + announceBytes;
  log(
    'sourceBundles',
    'delivery window by response (tap times, ms after the publish as the site sees them)',
    {
      bundleFetchBytes,
      announceBytes,
      reportBytes,
      pollingBytes,
      responses: carried.map(({ r, kinds }) => ({
        atMs: Math.round(r.at + oneWayDelayMs - t0),
        req: `${r.method} ${r.path.slice(0, 24)}`,
        status: r.status,
        bytes: r.bytes,
        ...(kinds.length ? { kinds, bodyBytes: r.body?.length, head: r.headLines } : {}),
        ...(r.path === '/v2' && kinds.length ? { answer: v2AnswerShape(r) } : {}),
      })),
    },
  );
  sampler.stop();
  log('sourceBundles', 'delivery window: bursts toward the site', {
    bursts: sampler.bursts(t0, t0 + (inMirrorMs as number)),
  });
  // Stages from the agent's own log.
  const lines = agentLogLines(agentLog, wall0);
  const stage = (msg: string, f: (o: Record<string, unknown>) => boolean) => {
    const o = lines.find((x) => x.msg === msg && f(x));
    return o ? (o.time as number) - wall0 : null;
  };
  const stages = {
    publishedMs: Math.round(publishedMs),
    bundleTakenMs: stage('publication taken', (o) => o.kind === 'git'),
    inMirrorMs: Math.round(inMirrorMs as number),
    resultRecordedMs: stage('result recorded', (o) => o.ref === 'pr/1'),
    atHubMs: planMs === null ? null : Math.round(planMs),
  };
  log('sourceBundles', "stages from the publish command's start (ms)", stages);
  const warnings = lines
    .filter((o) => (o.level as number) >= 40)
    .map((o) => ({ atMs: (o.time as number) - wall0, msg: o.msg, errors: o.errors ?? o.err }));
  if (warnings.length > 0) log('sourceBundles', 'agent warnings after the publish', { warnings });
  log('sourceBundles', 'requests at the relay after the publish (tap times, ms from the start)', {
    requests: tap.responses
      .filter((r) => r.start > t0 && r.start <= (planMs ?? 0) + t0)
      .map((r) => ({
        startMs: Math.round(r.start - t0),
        endMs: Math.round(r.at - t0),
        req: `${r.method} ${r.path.slice(0, 24)}`,
        status: r.status,
        up: r.reqBytes,
        down: r.bytes,
        ...(isSync(r) && r.body?.length ? { kinds: kindsOf(r) } : {}),
      })),
  });
  const floors = (ms: number | null) => (ms === null ? null : Math.round((ms / oneWayDelayMs) * 100) / 100);
  const r2 = (x: number) => Math.round(x * 100) / 100;
  const result = {
    timeScale: TIME_SCALE,
    oneWayDelayMs,
    treeBytes: repo.treeBytes,
    gitIncrementalBundle: gitIncremental,
    gitFullBundle: gitFull,
    tarball,
    publishedBundle: pub.size,
    linkBytes,
    hubRelayBytes,
    bundleFetchBytes,
    announceBytes,
    reportBytes,
    syncBytes,
    pollingBytes,
    deliveryBytes,
    ratioToGitBundle: r2(deliveryBytes / gitIncremental),
    // issue 46's floor: git's bundle and one signature
    ratioToGitBundleAndSignature: r2(deliveryBytes / (gitIncremental + SIGNATURE_BYTES)),
    ratioToGitBundleWithReports: r2((deliveryBytes + reportBytes) / gitIncremental),
    ratioToGitBundleWithPolling: r2((linkBytes as number) / gitIncremental),
    tarballOverLink: r2(tarball / Math.max(1, deliveryBytes)),
    tarballOverLinkWithPolling: r2(tarball / (linkBytes as number)),
    stages,
    publishToPlanMs: planMs === null ? null : Math.round(planMs),
    lightTimeFloors: floors(planMs),
    settings: { ...SOURCE_SETTINGS, inline: INLINE, wire: WIRE },
    ...(h2tap ? { h2cConnection: h2tap.connection } : {}),
    pass: {
      bytesVsGitBundle: deliveryBytes <= 1.1 * gitIncremental,
      bytesVsGitBundleAndSignature: deliveryBytes <= 1.1 * (gitIncremental + SIGNATURE_BYTES),
      bytesVsTarball: tarball >= 20 * deliveryBytes,
    },
  };
  log('sourceBundles', 'goals: link bytes <= 1.1 x git incremental bundle, >= 20 x below the tarball', {
    note: `Mars link at time scale ${TIME_SCALE}: ${oneWayDelayMs} ms one way; delivery = every byte of the downlink answers that carried the manifest + the bundle's Range responses (HTTP heads included), from the publish until the mirror holds the commit`,
    inMirrorFloors: floors(inMirrorMs),
  });
  emit(result);
} finally {
  await stopAll();
}
process.exit(0);
