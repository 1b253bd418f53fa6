/**
 * Fleet-scale benchmark (not a test; issue 41, decisions 400–402): a real hub filled through its hop API
 * as a fleet fills it, then each dashboard view's API answer timed (p50/p95) and weighed (bytes on the
 * wire, br), ingest with and without 10 live dashboards (`--live-clients N`), how long after the hub's
 * ack a dashboard hears of the batch (`fleet-moved`), and the process's RSS (the hub runs in it; from
 * the cache nothing else is held).
 *
 *   npx tsx hub/bench/fleetScale.ts [--sites 1000] [--cells 200] [--quick] [--store sqlite|postgres] [--views-only]
 *
 * `--quick` is 100 sites × 200 cells. The fleet's documents and bundles are cached (fleetCache.ts,
 * `--cache <dir>`). Round 2 is pushed alone; round 3 is the comparison: its sites in up to 8 blocks,
 * pushed alternately with and without the dashboards connected (two hubs: to one hub and split between
 * both), ABBA (fleetPush.ts), so both sides of each ratio merge the same documents on the same machine.
 * `--store postgres` starts a PostgreSQL server (hub/test/postgres.ts) for the run.
 * The dashboard's first paint in Chromium (overview, matrix first tile) is timed after the views
 * (`firstPaint.ts`; `--skip-browser` leaves it out).
 * Prints one JSON object.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { TestClock } from '../test/agentSim.js';
import { PgServer } from '../test/postgres.js';
import { timedViews } from './dashboardViews.js';
import { firstPaint } from './firstPaint.js';
import { fleetCache, siteOf } from './fleetCache.js';
import { type BenchHub, childHub, compileHubProcess, inProcessHub, prepare } from './fleetHubs.js';
import { type Arm, batchStarts, blockCount, interleaved, type Push, pushBatches } from './fleetPush.js';
import { type LoopDelayMs, type MemoryMb, procStatusMb } from './hubProbe.js';
import { liveClients } from './liveClients.js';

const { values } = parseArgs({
  options: {
    sites: { type: 'string', default: '1000' },
    cells: { type: 'string', default: '200' },
    quick: { type: 'boolean', default: false },
    store: { type: 'string', default: 'sqlite' },
    cache: { type: 'string' },
    reads: { type: 'string', default: '12' },
    'skip-browser': { type: 'boolean', default: false },
    hubs: { type: 'string', default: '1' },
    'in-process': { type: 'boolean', default: false },
    /** Dashboards on the event stream in round 3; 0 measures what round 3 costs without them. */
    'live-clients': { type: 'string', default: '10' },
    /** Node flags for each hub's process, e.g. "--cpu-prof --max-semi-space-size=4". */
    'hub-node-options': { type: 'string', default: '' },
    /** Stop after the views (and first paint): no rounds 2 and 3, for timing a change to a view. */
    'views-only': { type: 'boolean', default: false },
  },
});
const sites = values.quick ? 100 : Number(values.sites);
const cells = values.quick ? 200 : Number(values.cells);
const say = (m: string) => process.stderr.write(`[fleetScale] ${m}\n`);
const clock = new TestClock();
const cache = await fleetCache(
  sites,
  cells,
  values.cache ?? join(import.meta.dirname, '../../bench/.cache'),
  clock,
  say,
);
const { keys, bundleOf } = cache;

// The built dashboard (vitest's set-up and `npm run build` make it): served so Chromium can paint it.
const uiDir = join(import.meta.dirname, '../../ui/dist');
const pg = values.store === 'postgres' ? await PgServer.start({ durable: true }) : null;
const pgUrl = pg ? await pg.createDatabase() : null;
const dir = mkdtempSync(join(tmpdir(), 'fleet-scale-'));
const hubCount = Number(values.hubs);
if (hubCount > 1 && (!pg || values['in-process']))
  throw new Error('--hubs 2 needs --store postgres, not --in-process');
const viewer = await prepare(
  pg && pgUrl ? { url: pgUrl, password: pg.password } : { dataDir: join(dir, 'hub-0') },
  keys.map((key, i) => ({ site: siteOf(i), key })),
  clock.now() - 1000,
);
const program = values['in-process'] ? null : await compileHubProcess();
const nodeFlags = values['hub-node-options'].split(' ').filter(Boolean);
const hubs: BenchHub[] = [];
for (let h = 0; h < hubCount; h++) {
  const args = {
    dataDir: join(dir, `hub-${h}`),
    uiDir,
    clock: clock.now(),
    ...(pgUrl ? { postgres: { url: pgUrl } } : {}),
  };
  hubs.push(
    program
      ? await childHub(program, args, pg?.password, nodeFlags)
      : await inProcessHub(args, clock, pg?.password),
  );
}
const hubA = hubs[0] as BenchHub;
const urls = hubA.urls;
const advance = async (ms: number) => {
  for (const h of hubs) await h.advance(ms);
  if (program) clock.advance(ms);
};

// RSS of each hub's process every 200 ms, its peak per phase; the breakdown and the main thread's
// event-loop delay at the end of each phase (hubProbe.ts).
type Phase = 'fill' | 'views' | 'round2' | 'round3';
let phase: Phase = 'fill';
const peaks: Record<string, number> = {};
let peakRss = 0;
let peakPhase: Phase = 'fill';
const rss = () => {
  let r = 0;
  for (const pid of new Set(hubs.map((h) => h.pid))) r = Math.max(r, procStatusMb(pid).rss);
  peaks[phase] = Math.max(peaks[phase] ?? 0, r);
  if (r > peakRss) [peakRss, peakPhase] = [r, phase];
  return r;
};
const rssTimer = setInterval(rss, 200);
const memory: Partial<Record<Phase, MemoryMb>> = {};
const loopDelay: Partial<Record<Phase, LoopDelayMs>> = {};
const endPhase = async (next: Phase) => {
  rss();
  memory[phase] = await hubA.memory();
  loopDelay[phase] = await hubA.loopDelay(true);
  say(`${phase}: ${JSON.stringify({ memory: memory[phase], loopDelay: loopDelay[phase] })}`);
  phase = next;
};

/** A round's POSTs (all its sites) to `targets` in `lanes` lanes: results per second. */
async function round(r: number, targets: BenchHub[], lanes: number) {
  const { bundles, ms } = await pushBatches(
    { round: r, sites, bundleOf, targets, lanes },
    batchStarts(sites),
  );
  return Math.round((bundles * cells) / (ms / 1000));
}
/** GET with br: status, wire bytes, ms. */
function get(path: string): Promise<{ status: number; bytes: number; ms: number }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = request(
      `${urls.api}${path}`,
      { headers: { authorization: viewer.authorization, 'accept-encoding': 'br, gzip' } },
      (res) => {
        let bytes = 0;
        res.on('data', (d: Buffer) => {
          bytes += d.length;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes, ms: performance.now() - t0 }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return Math.round((s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? 0) * 10) / 10;
};

say(
  `${pg ? 'postgres' : 'sqlite'} × ${hubCount} hub(s)${program ? '' : ' in process'}: filling ${sites}×${cells}`,
);
const fillRate = await round(0, hubs, hubs.length);
say(`filled at ${fillRate} results/s, rss ${rss()} MB`);
await hubA.sweep();
await endPhase('views');

const windowSites = Array.from({ length: Math.min(sites, 30) }, (_, i) => siteOf(i));
// Every read of the dashboard's Api port, timed or named as not (dashboardViews.ts).
const views = timedViews(siteOf(1), windowSites);
const viewStats: Record<string, { p50Ms: number; p95Ms: number; wireBytes: number; rssMb: number }> = {};
// Two hubs: ingest is what is measured (the views are the one-hub run's).
for (const [name, path] of hubCount > 1 ? [] : Object.entries(views)) {
  const ms: number[] = [];
  let bytes = 0;
  for (let k = 0; k < Number(values.reads); k++) {
    const last = await get(path);
    if (last.status !== 200) throw new Error(`${path} answered ${last.status}`);
    ms.push(last.ms);
    bytes = last.bytes;
  }
  // The hub's RSS after the view's reads: a view that walks the fleet shows here.
  viewStats[name] = { p50Ms: pct(ms, 50), p95Ms: pct(ms, 95), wireBytes: bytes, rssMb: rss() };
}
say(`views: ${JSON.stringify(viewStats)}`);
const paint = values['skip-browser'] || hubCount > 1 ? null : await firstPaint(urls.api, viewer.token, uiDir);
say(`first paint: ${JSON.stringify(paint)}`);
const rssAfterViews = rss();
if (values['views-only']) {
  clearInterval(rssTimer);
  for (const h of hubs) await h.close();
  if (pg) await pg.stop();
  rmSync(dir, { recursive: true, force: true });
  const store = pg ? 'postgres' : 'sqlite';
  console.log(
    JSON.stringify({ store, sites, cells, fillResultsPerSec: fillRate, views: viewStats, rssAfterViews }),
  );
  process.exit(0);
}
await endPhase('round2');

// Round 2 alone: one hub (with two hubs: one of them, pushed in two lanes as the two-hub blocks are).
await advance(60_000);
const round2 = await round(1, [hubA], hubs.length);
say(`round 2 alone: ${round2} results/s`);
await endPhase('round3');

// Round 3, the comparison (fleetPush.ts). One hub: blocks pushed alone against blocks pushed with
// `--live-clients` dashboards on the event stream, connected before their block and closed after it,
// the delay from each batch's ack to its fleet-moved at each client. Two hubs: blocks pushed to one hub
// against blocks split between both, two lanes each, no dashboards.
await advance(60_000);
const push =
  (targets: BenchHub[], onAck?: Push['onAck']): Arm['push'] =>
  (starts) =>
    pushBatches({ round: 2, sites, bundleOf, targets, lanes: hubs.length, onAck }, starts);
const delays: number[] = [];
let liveBatches = 0;
let live: ReturnType<typeof liveClients> | null = null;
const withClients: Arm = {
  before: async () => {
    live = liveClients(`${urls.api}/api/events`, viewer.authorization, Number(values['live-clients']));
    await new Promise((r) => setTimeout(r, 500));
  },
  push: (starts) => push([hubA], (s, at) => live?.acked(s, at))(starts),
  after: async () => {
    await new Promise((r) => setTimeout(r, 2000));
    live?.close();
    delays.push(...(live?.delays ?? []));
    liveBatches += live?.batches() ?? 0;
  },
};
const starts = batchStarts(sites);
const blocks = blockCount(starts.length);
const compared = await interleaved(
  starts,
  blocks,
  cells,
  hubCount > 1 ? [{ push: push([hubA]) }, { push: push(hubs) }] : [{ push: push([hubA]) }, withClients],
);
const [sideA, sideB] = compared.rates;
say(`round 3 interleaved: ${sideA} / ${sideB} results/s (${JSON.stringify(compared.blocks)})`);
await endPhase('round3'); // records round 3 (the phase after it is never measured)
clearInterval(rssTimer);
const hwm = Math.max(...[...new Set(hubs.map((h) => h.pid))].map((pid) => procStatusMb(pid).hwm));
const ratio = (a: number, b: number) => Math.round((a / b) * 100) / 100;
// Round 3's blocks: each one's side (0: alone / one hub, 1: with clients / two hubs) and rate, in order.
const ingestBlocks = { round: 3, blocks: compared.blocks, round2Alone: round2 };
const result = {
  store: pg ? 'postgres' : 'sqlite',
  hubs: hubCount,
  hubProcess: program !== null,
  sites,
  cells,
  fillResultsPerSec: fillRate,
  ...(hubCount > 1
    ? {
        ingestResultsPerSec: { oneHub: sideA, twoHubs: sideB },
        twoHubRatio: ratio(sideB, sideA),
        ingestBlocks,
      }
    : {
        views: viewStats,
        firstPaint: paint,
        // `with10Clients` keeps its name; `liveClients` says how many there were (`--live-clients`).
        liveClients: Number(values['live-clients']),
        ingestResultsPerSec: { alone: sideA, with10Clients: sideB },
        ingestWithClientsRatio: ratio(sideB, sideA),
        ingestBlocks,
        liveDelayMs: {
          p50: pct(delays, 50),
          p95: pct(delays, 95),
          samples: delays.length,
          batches: liveBatches,
        },
      }),
  // The hub's process (the first hub's; the most of any hub's for peak and hwm): VmRSS after the views,
  // sampled peak and the phase it fell in, and the kernel's high-water mark (VmHWM).
  rssMb: { afterViews: rssAfterViews, peak: peakRss, peakPhase, hwm, peakByPhase: peaks },
  memoryMb: memory,
  loopDelayMs: loopDelay,
};
for (const h of hubs) await h.close();
if (pg) await pg.stop();
rmSync(dir, { recursive: true, force: true });
console.log(JSON.stringify(result));
process.exit(0);
