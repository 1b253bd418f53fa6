/**
 * `npm run bench [-- --quick]`: every benchmark part, Driftline and its baseline side by side in one run.
 * Each part runs as its own child process (so one crash or leak cannot spoil another, and RSS is its own),
 * bounded in time; a part that fails reports null values and an `error` string. Progress goes to stderr;
 * stdout carries one JSON document, also written to bench/results/latest.json.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { lastJsonLine, runTs } from './lib/child.js';
import { fleetScalePart } from './lib/fleetScalePart.js';
import { refReadsPart } from './lib/refReadsPart.js';

const quick = process.argv.includes('--quick');
const only = process.argv
  .find((a) => a.startsWith('--only='))
  ?.slice(7)
  .split(',');
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const say = (m: string) => process.stderr.write(`[bench] ${m}\n`);

const flag = quick ? ['--quick'] : [];
const min = 60_000;

type Part = { keys: Record<string, unknown>; run: () => Promise<Record<string, unknown>> };
const nulls = (o: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(
    Object.entries(o).map(([k, v]) => [
      k,
      v !== null && typeof v === 'object' ? nulls(v as Record<string, unknown>) : null,
    ]),
  );

/** A siteDay day's figures: bytes, pushes, both floors (one signature a round; one per direction) and ratios. */
const SITE_DAY = {
  bytesUp: 0,
  bytesDown: 0,
  requests: 0,
  pushes: 0,
  floorBytes: 0,
  floorBothWaysBytes: 0,
  vsFloor: 0,
  vsFloorBothWays: 0,
  costUsd: 0,
};
/** What a siteDay part reports (v1 and `--wire=2` alike): its days, each as {@link SITE_DAY}. */
const SITE_DAY_PART = {
  cells: 0,
  wire: 0,
  tariffUsdPerMb: 0,
  quiet: { ...SITE_DAY, pollOnlyBytes: 0, automergeSyncBytes: 0 },
  busy: { ...SITE_DAY, pollOnlyBytes: 0, automergeSyncBytes: 0 },
  // the busy day with plans finishing 10 s apart, pushed as the daemon does (decisions 395, 485)
  busyAsDaemon: SITE_DAY,
  // the same with sync.newsHoldS: 0 (each changed plan with the next push)
  busyNewsAtOnce: SITE_DAY,
  pass: { quietWithin2xFloor: false },
};

/** What sourceBundles reports (v1, and `--wire=2` beside it). */
const SOURCE_BUNDLES = {
  timeScale: 0,
  oneWayDelayMs: 0,
  treeBytes: 0,
  gitIncrementalBundle: 0,
  gitFullBundle: 0,
  tarball: 0,
  publishedBundle: 0,
  linkBytes: 0,
  hubRelayBytes: 0,
  bundleFetchBytes: 0,
  announceBytes: 0,
  reportBytes: 0,
  syncBytes: 0,
  pollingBytes: 0,
  deliveryBytes: 0,
  ratioToGitBundle: 0,
  // issue 46's floor: git's bundle and one signature
  ratioToGitBundleAndSignature: 0,
  ratioToGitBundleWithReports: 0,
  ratioToGitBundleWithPolling: 0,
  tarballOverLink: 0,
  publishToPlanMs: 0,
  lightTimeFloors: 0,
  pass: { bytesVsGitBundle: 0, bytesVsGitBundleAndSignature: 0, bytesVsTarball: 0 },
};

/** hopV2Budget: a day over one v2 carrier, and v1's day beside it. */
const V2_CARRIER = { bytes: 0, connections: 0, requests: 0, messageBytes: 0, vsFloor: 0, vsFloorBothWays: 0 };
const V2_DAY = { http1: V2_CARRIER, h2One: V2_CARRIER, h2PerRound: V2_CARRIER };
const V1_DAY = { bytes: 0, requests: 0, floorBytes: 0, floorBothWaysBytes: 0, vsFloor: 0 };

const parts: Record<string, Part> = {
  delivery: {
    keys: { oneWayDelayMs: 0, hops: 0, driftlineMs: 0, automergeSyncMs: 0 },
    run: async () => lastJsonLine((await runTs('bench/parts/delivery.ts', flag, 5 * min)).stdout),
  },
  controlLatency: {
    keys: {
      oneWayDelayMs: 0,
      floorMs: 0,
      planRequestMs: 0,
      planRequestVsFloor: 0,
      baselineMs: 0,
      baselineVsFloor: 0,
      measuredFloorMs: 0,
      approvalMs: 0,
      approvalVsFloor: 0,
      approvalToAppliedMs: 0,
      approvalToAppliedLightTimes: 0,
      appliedAtHubLightTimes: 0,
      mirrorMs: 0,
      mirrorVsFloor: 0,
      mirrorTakenLightTimes: 0,
      busy: false,
      pass: {
        receiptWithin1_2xFloor: false,
        approvalWithin1_2xFloor: false,
        mirrorWithin1_2xFloor: false,
      },
    },
    // Two halves: a plan request against the pull-per-interval baseline (in process), then an approval
    // and a provider mirror as processes (bench/parts/controlLatencyApproval.ts).
    run: async () => {
      const plan = lastJsonLine(
        (await runTs('bench/parts/controlLatency.ts', flag, (quick ? 4 : 12) * min)).stdout,
      );
      const busy = lastJsonLine(
        (await runTs('bench/parts/controlLatencyApproval.ts', flag, (quick ? 8 : 15) * min)).stdout,
      );
      const within = (x: unknown) => typeof x === 'number' && x <= 1.2;
      return {
        ...plan,
        ...busy,
        oneWayDelayMs: plan.oneWayDelayMs,
        pass: {
          ...(plan.pass as object),
          approvalWithin1_2xFloor: within(busy.approvalVsFloor),
          mirrorWithin1_2xFloor: within(busy.mirrorVsFloor),
        },
      };
    },
  },
  startup: {
    keys: {
      runs: 0,
      bareNode: { wallMs: 0, cpuMs: 0 },
      compiled: {
        hub: { wallMs: 0, cpuMs: 0 },
        relay: { wallMs: 0, cpuMs: 0 },
        edgeAgent: { wallMs: 0, cpuMs: 0 },
      },
      fromSource: {
        hub: { wallMs: 0, cpuMs: 0 },
        relay: { wallMs: 0, cpuMs: 0 },
        edgeAgent: { wallMs: 0, cpuMs: 0 },
      },
      pass: { versionWithin600Ms: false },
    },
    run: async () => lastJsonLine((await runTs('bench/parts/startup.ts', flag, 3 * min)).stdout),
  },
  siteDay: {
    keys: SITE_DAY_PART,
    run: async () => lastJsonLine((await runTs('bench/parts/siteDay.ts', flag, 6 * min)).stdout),
  },
  siteDayV2: {
    // issue 46: the same days with the agent on hop v2 (`sync.wire: 2`, decision 495), beside siteDay's v1;
    // its days on HTTP/1.1 as siteDay's, and `h2c` the same on one h2c connection, counted on the socket
    keys: {
      ...SITE_DAY_PART,
      h2c: {
        quiet: { ...SITE_DAY, connectionBytes: 0, connections: 0 },
        busy: { ...SITE_DAY, connectionBytes: 0, connections: 0 },
        busyAsDaemon: { ...SITE_DAY, connectionBytes: 0, connections: 0 },
      },
      // issue 46's quiet goal on the carrier an `http:` upstream gets (h2c), beside HTTP/1.1's
      pass: { quietWithin2xFloor: false, quietH2cWithin2xFloor: false },
    },
    run: async () =>
      lastJsonLine((await runTs('bench/parts/siteDay.ts', [...flag, '--wire=2'], 10 * min)).stdout),
  },
  hopV2Budget: {
    // issue 46: siteDay's quiet and busy days in hop v2 messages beside v1 and the floor, same run
    // (docs/decisions/490-hop-v2-wire-format.md); each carrier: bytes, vsFloor, vsFloorBothWays
    keys: {
      cells: 0,
      v1: { quiet: V1_DAY, busy: V1_DAY },
      v2: {
        quiet: V2_DAY,
        quietAsChanges: V2_DAY,
        busy: V2_DAY,
        quietStampsWithPush: V2_DAY,
        busyStampsWithPush: V2_DAY,
      },
      pass: {
        quietWithin2xFloor: false,
        quietHttp1Within2xFloor: false,
        quietStampsAsV1Within2xFloor: false,
      },
    },
    run: async () => lastJsonLine((await runTs('bench/parts/hopV2Budget.ts', flag, 8 * min)).stdout),
  },
  wireBytes: {
    keys: {
      cells: 0,
      driftline: 0,
      automergeSaveSince: 0,
      fullPlanPost: 0,
      brotliJsonDelta: 0,
      vsFloor: 0,
      pass: { within3xFloor: false },
    },
    run: async () => lastJsonLine((await runTs('bench/parts/wireBytes.ts', flag, 3 * min)).stdout),
  },
  loss: {
    keys: {
      driftline: { convergedMs: 0, lost: 0, duplicated: 0 },
      automergeSync: { convergedMs: 0, lost: 0, duplicated: 0 },
    },
    run: async () => lastJsonLine((await runTs('bench/parts/loss.ts', flag, (quick ? 3 : 8) * min)).stdout),
  },
  transfer: {
    keys: {
      sizeBytes: 0,
      interruptions: 0,
      linkBytesPerSec: 0,
      tus: { bytesSent: 0, goodputRatio: 0 },
      plainHttp: { bytesSent: 0, goodputRatio: 0 },
    },
    run: async () =>
      lastJsonLine((await runTs('bench/parts/transfer.ts', flag, (quick ? 3 : 15) * min)).stdout),
  },
  sourceBundles: {
    keys: SOURCE_BUNDLES,
    run: async () =>
      lastJsonLine((await runTs('bench/parts/sourceBundles.ts', flag, (quick ? 8 : 12) * min)).stdout),
  },
  sourceBundlesV2: {
    // issue 46: the same commit with the agent on hop v2 (h2c) and the compact manifest (decision 505)
    keys: { ...SOURCE_BUNDLES, h2cConnection: { up: 0, down: 0, opened: 0 } },
    run: async () =>
      lastJsonLine(
        (await runTs('bench/parts/sourceBundles.ts', [...flag, '--wire=2'], (quick ? 8 : 12) * min)).stdout,
      ),
  },
  contactWindows: {
    keys: {
      results: 0,
      floorMeanS: 0,
      driftlineMeanS: 0,
      naiveMeanS: 0,
      driftlineVsFloor: 0,
      naiveVsFloor: 0,
      naiveSlowVsFloor: 0,
      pass: { within1_02xFloor: false },
    },
    // A virtual clock: a simulated day of three relays takes seconds.
    run: async () => lastJsonLine((await runTs('bench/parts/contactWindows.ts', flag, 3 * min)).stdout),
  },
  hubIngest: {
    keys: {
      agents: 0,
      cells: 0,
      resultsPerSec: 0,
      rssMb: 0,
      pgResultsPerSec: 0,
      pgRssMb: 0,
      pg2ResultsPerSec: 0,
      pg2RssMb: 0,
      pgDatabaseMb: 0,
      vsAutomerge: 0,
      vsAutomergeCpu: 0,
      pass: { within0_8xAutomerge: false, rssWithin400Mb: false },
    },
    run: async () => {
      // The hub's own benchmark (hub/bench/ingest.ts): signed doc-deltas through verify + merge +
      // materialise + commit; two rounds (first plans, then a re-plan of every cell). The agents' bundles
      // are made by a first process, so that the measured ones are only hubs. hub/bench/ingestStores.ts
      // runs the same bundles on SQLite (with the in-run baselines), on PostgreSQL with one hub, and with
      // two hub processes on one database (pg2: results/s of both together; RSS of the larger hub, each on
      // stderr).
      const [agents, cells] = quick ? [50, 20] : [1000, 200];
      const dir = mkdtempSync(join(tmpdir(), 'bench-ingest-'));
      const args = [String(agents), String(cells), '--batch', '100', '--cache', join(dir, 'bundles')];
      try {
        await runTs('hub/bench/ingest.ts', [...args, '--generate-only'], (quick ? 4 : 30) * min);
        const r = await runTs('hub/bench/ingestStores.ts', args, (quick ? 10 : 90) * min);
        const j = lastJsonLine(r.stdout) as {
          sqlite: {
            resultsPerSec: number;
            rssMb: number;
            baseline?: { hubVsAutomerge?: number; hubVsAutomergeCpu?: number } | null;
          };
          postgres: {
            oneHub: { resultsPerSec: number; rssMb: number; databaseMb: number };
            twoHubs: { resultsPerSec: number; perHub: { rssMb: number }[]; databaseMb: number };
            oneHubVsSqlite: number;
            twoHubsVsOne: number;
          } | null;
          postgresSkipped?: string;
        };
        // The hub bench prints its own rate and two in-run baselines (Automerge merge alone, SQLite alone).
        process.stderr.write(`[bench:hubIngest] baseline ${JSON.stringify(j.sqlite.baseline)}\n`);
        const pg = j.postgres;
        process.stderr.write(
          pg
            ? `[bench:hubIngest] postgres: 1 hub ${pg.oneHubVsSqlite} × SQLite (goal ≥ 0.7), 2 hubs ${pg.twoHubsVsOne} × 1 hub (goal ≥ 1.5), RSS per hub ${JSON.stringify(pg.twoHubs.perHub.map((h) => h.rssMb))} MB, database ${pg.oneHub.databaseMb} MB\n`
            : `[bench:hubIngest] postgres skipped: ${j.postgresSkipped}\n`,
        );
        // rssMb: each hub process's RSS right after its hub phase, before the in-run baselines add their own.
        // vsAutomerge: the hub's results/s over Automerge alone doing the hub's part (load each stored
        // document, merge the same bundles, save it) in the same process and run; vsAutomergeCpu: the same
        // from CPU time, steadier on a shared machine (docs/decisions/350-hub-ingest-throughput.md).
        const vs = j.sqlite.baseline?.hubVsAutomerge ?? null;
        return {
          agents,
          cells,
          resultsPerSec: j.sqlite.resultsPerSec,
          rssMb: j.sqlite.rssMb,
          pgResultsPerSec: pg?.oneHub.resultsPerSec ?? null,
          pgRssMb: pg?.oneHub.rssMb ?? null,
          pg2ResultsPerSec: pg?.twoHubs.resultsPerSec ?? null,
          pg2RssMb: pg ? Math.max(...pg.twoHubs.perHub.map((h) => h.rssMb)) : null,
          pgDatabaseMb: pg?.oneHub.databaseMb ?? null,
          vsAutomerge: vs,
          vsAutomergeCpu: j.sqlite.baseline?.hubVsAutomergeCpu ?? null,
          pass: { within0_8xAutomerge: vs !== null && vs >= 0.8, rssWithin400Mb: j.sqlite.rssMb <= 400 },
        };
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  },
  hubIngestV2: {
    // issue 46: the hub's ingest of the same fleet as hop v2 pushes (decision 500: after the first round
    // the unchanged half of each agent's cells is a heartbeat whose change the hub rebuilds), beside v1's
    // doc-deltas in the same run: SQLite, hub only (the Automerge baselines are hubIngest's).
    keys: {
      agents: 0,
      cells: 0,
      v1ResultsPerSec: 0,
      v1RssMb: 0,
      v2ResultsPerSec: 0,
      v2RssMb: 0,
      v2VsV1: 0,
      v1BundleMb: 0,
      v2BundleMb: 0,
      pass: { v2AtLeast5000PerSec: false },
    },
    run: async () => {
      const [agents, cells] = quick ? [50, 20] : [1000, 200];
      const dir = mkdtempSync(join(tmpdir(), 'bench-ingest-v2-'));
      try {
        const one = async (wire: 1 | 2) => {
          const args = [String(agents), String(cells), '--batch', '100', '--wire', String(wire)];
          const cache = ['--cache', join(dir, `bundles-v${wire}`)];
          await runTs('hub/bench/ingest.ts', [...args, ...cache, '--generate-only'], (quick ? 4 : 30) * min);
          const r = await runTs(
            'hub/bench/ingest.ts',
            [...args, ...cache, '--hub-only'],
            (quick ? 4 : 30) * min,
          );
          return lastJsonLine(r.stdout) as { resultsPerSec: number; rssMb: number; bundleMb: number };
        };
        const v1 = await one(1);
        const v2 = await one(2);
        return {
          agents,
          cells,
          v1ResultsPerSec: v1.resultsPerSec,
          v1RssMb: v1.rssMb,
          v2ResultsPerSec: v2.resultsPerSec,
          v2RssMb: v2.rssMb,
          v2VsV1: +(v2.resultsPerSec / v1.resultsPerSec).toFixed(2),
          v1BundleMb: v1.bundleMb,
          v2BundleMb: v2.bundleMb,
          pass: { v2AtLeast5000PerSec: v2.resultsPerSec >= 5000 },
        };
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  },
  edgeOffline: {
    keys: { results: 0, rssMb: 0, idleRssMb: 0, diskMb: 0, docLoadP99Ms: 0, packaged: false },
    run: async () => {
      // --packaged: on the offline package (its Node, flags and bundled code); the part measures that
      // process's peak itself, this child being only the wrapper that builds and unpacks it.
      const packaged = process.argv.includes('--packaged');
      const args = packaged ? [...flag, '--packaged'] : flag;
      const r = await runTs(
        'bench/parts/edgeOffline.ts',
        args,
        (quick ? 3 : 45) * min + (packaged ? 10 * min : 0),
      );
      const j = lastJsonLine(r.stdout);
      return { ...j, rssMb: packaged ? j.rssMb : (r.peakRssMb ?? j.rssMb) };
    },
  },
  relayCustody: {
    keys: {
      sites: 0,
      custodyMb: 0,
      bundles: 0,
      blobs: 0,
      rssMb: 0,
      idleRssMb: 0,
      fillPeakRssMb: 0,
      heldRssMb: 0,
      fillMBps: 0,
      bundlesPerSec: 0,
      drainMBps: 0,
      drainedAll: false,
      packaged: false,
    },
    // The relay (packaged unless DRIFTLINE_EDGE_PACKAGE=source) holding 1 GB for 100 sites, then
    // forwarding it; rssMb is the relay process's own peak, measured by the part.
    run: async () =>
      lastJsonLine((await runTs('bench/parts/relayCustody.ts', flag, (quick ? 12 : 60) * min)).stdout),
  },
  fleetScale: fleetScalePart(quick, flag),
  refReads: refReadsPart(quick),
  ui: {
    keys: { cells: 0, firstRenderMs: 0, overviewFirstRenderMs: 0, updateLatencyMs: 0 },
    run: async () => {
      const r = await runTs('ui/bench/render.ts', [], (quick ? 5 : 10) * min);
      const j = JSON.parse(r.stdout.slice(r.stdout.indexOf('{'))) as {
        big: { cells: number; firstRenderMs: number };
        overview: { firstRenderMs: number };
        eventToPaint: { medianMs: number };
      };
      return {
        cells: j.big.cells,
        firstRenderMs: j.big.firstRenderMs,
        overviewFirstRenderMs: j.overview.firstRenderMs,
        updateLatencyMs: j.eventToPaint.medianMs,
      };
    },
  },
};

const out: Record<string, unknown> = { quick };
for (const [name, part] of Object.entries(parts)) {
  if (only && !only.includes(name)) continue;
  const t0 = Date.now();
  say(`${name}: running`);
  try {
    const got = await part.run();
    // Exactly the keys the README's benchmark table names, in its order (the team's checks read them).
    const pick = (shape: Record<string, unknown>, v: Record<string, unknown>): Record<string, unknown> =>
      Object.fromEntries(
        Object.entries(shape).map(([k, s]) => [
          k,
          s !== null && typeof s === 'object'
            ? pick(s as Record<string, unknown>, (v[k] ?? {}) as Record<string, unknown>)
            : (v[k] ?? null),
        ]),
      );
    out[name] = pick(part.keys, got);
    say(`${name}: done in ${Math.round((Date.now() - t0) / 1000)} s ${JSON.stringify(out[name])}`);
  } catch (e) {
    out[name] = { ...nulls(part.keys), error: (e as Error).message };
    say(`${name}: FAILED ${(e as Error).message}`);
  }
}
const text = JSON.stringify(out, null, 2);
mkdirSync(join(root, 'bench/results'), { recursive: true });
writeFileSync(join(root, 'bench/results/latest.json'), `${text}\n`);
process.stdout.write(`${text}\n`);
