/**
 * Fleet-scale benchmark (not a test; issue 41, decisions 400–402): a real hub filled through its hop API
 * as a fleet fills it, then each dashboard view's API answer timed (p50/p95) and weighed (bytes on the
 * wire, br), ingest rate of a round with and without 10 live dashboards (`--live-clients N`; round 3
 * merges larger documents than round 2, so `--live-clients 0` gives the two rounds' ratio without any),
 * how long after the hub's ack a dashboard hears of the batch (`fleet-moved`), and the process's RSS (the
 * hub runs in it; from the cache nothing else is held).
 *
 *   npx tsx hub/bench/fleetScale.ts [--sites 1000] [--cells 200] [--quick] [--store sqlite|postgres]
 *
 * `--quick` is 100 sites × 200 cells. Each site has one agent planning `cells` cells (4 environments);
 * round 1 plans every cell (~3 % drift), rounds 2 and 3 change 5 % of the cells and confirm the rest
 * unchanged. Generated documents and signed bundles are cached in `bench/.cache/` (`--cache <dir>`), so a
 * rerun only measures. `--store postgres` starts a PostgreSQL server (hub/test/postgres.ts) for the run.
 * The dashboard's first paint in Chromium (overview, matrix first tile) is timed after the views
 * (`firstPaint.ts`; `--skip-browser` leaves it out).
 * Prints one JSON object.
 */
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type * as A from '@automerge/automerge';
import {
  BATCH_CONTENT_TYPE,
  type BundleHeader,
  cborDecode,
  cborEncode,
  cryptoRandomBytes,
  docId,
  encodeBatch,
  encodeBundle,
  generateSigningKeyPair,
  monotonicUlid,
  publicKeyToText,
} from '@driftline/protocol';
import { TestClock } from '../test/agentSim.js';
import { PgServer } from '../test/postgres.js';
import { FastAgentDoc, type RunSpec } from './agentDocs.js';
import { firstPaint } from './firstPaint.js';
import { type BenchHub, childHub, compileHubProcess, inProcessHub, prepare } from './fleetHubs.js';
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
  },
});
const sites = values.quick ? 100 : Number(values.sites);
const cells = values.quick ? 200 : Number(values.cells);
const ROUNDS = 3;
const BATCH = 25;
const ENVS = ['prod', 'staging', 'dev', 'test'];
const say = (m: string) => process.stderr.write(`[fleetScale] ${m}\n`);
const clock = new TestClock();
const ids = monotonicUlid(() => clock.now(), cryptoRandomBytes);
const siteOf = (i: number) => `site-${String(i).padStart(4, '0')}`;
const cadenceS: Record<string, number> = {};
for (let c = 0; c < cells; c++) cadenceS[`${ENVS[c % 4]}/comp-${Math.floor(c / 4)}`] = 3600;
const facts = (at: number) => ({
  version: '0.1.0',
  cadenceS,
  contactIntervalS: 3600,
  upstream: 'http://relay.local:8080',
  queueDepth: 0,
  reportedAt: at,
});

type Cache = { sites: number; cells: number; keys: string[]; clock: number; index: [number, number][][] };
const cacheDir = values.cache ?? join(import.meta.dirname, '../../bench/.cache');
mkdirSync(cacheDir, { recursive: true });
const cacheFile = join(cacheDir, `fleetScale-${sites}x${cells}.bundles`);
const metaFile = `${cacheFile}.meta.cbor`;

/** Every site's agent, its document and its signed bundle per round, written to the cache. */
async function generate(): Promise<Cache> {
  const t0 = performance.now();
  const out = openSync(cacheFile, 'w');
  const index: [number, number][][] = Array.from({ length: ROUNDS }, () => []);
  const keys: string[] = [];
  let at = 0;
  for (let i = 0; i < sites; i++) {
    const site = siteOf(i);
    const pair = await generateSigningKeyPair();
    keys.push(await publicKeyToText(pair.publicKey));
    const doc = new FastAgentDoc(site, 'a1', (i + 1).toString(16).padStart(32, '0'), facts);
    doc.publishFacts(facts(clock.now()), clock.now());
    let acked: A.Heads = [];
    for (let r = 0; r < ROUNDS; r++) {
      for (let c0 = 0; c0 < cells; c0 += 10) {
        const together: RunSpec[] = [];
        for (let c = c0; c < Math.min(cells, c0 + 10); c++) {
          clock.advance(1);
          const h = (i * 7919 + c * 104_729) % 100;
          const changed = r === 0 || (h + r * 37) % 100 < 5;
          together.push({
            runId: ids(),
            component: `comp-${Math.floor(c / 4)}`,
            environment: ENVS[c % 4] as string,
            status: (h + (changed ? r : 0)) % 100 < 3 ? 'drift' : 'clean',
            planHash: (changed ? r.toString(16) : '0').padStart(64, '0'),
            at: clock.now(),
          });
        }
        doc.recordBatch(together);
      }
      const heads = doc.h.getHeads();
      const header: BundleHeader & { kind: 'doc-delta' } = {
        id: ids() as never,
        kind: 'doc-delta',
        source: { site, agent: 'a1' } as never,
        destination: 'hub',
        created: clock.now(),
        lifetimeS: 30 * 86_400,
        priority: 'status',
        doc: docId(site, 'a1', 1),
        heads,
      };
      const changes = doc.h.saveSince(acked) as Uint8Array<ArrayBuffer>;
      const bytes = await encodeBundle(header, { epoch: 1, changes, blobs: [] }, pair.privateKey);
      writeSync(out, bytes);
      (index[r] as [number, number][]).push([at, bytes.length]);
      at += bytes.length;
      acked = heads;
      doc.confirmApart = true; // the hub's ack says it reads `confirmed` (decision 330)
    }
    doc.h.free();
  }
  closeSync(out);
  const meta: Cache = { sites, cells, keys, clock: clock.now(), index };
  writeFileSync(metaFile, cborEncode(meta));
  say(`generated ${sites}×${cells}×${ROUNDS} in ${Math.round((performance.now() - t0) / 1000)} s`);
  return meta;
}

const cached = existsSync(metaFile) ? (cborDecode(readFileSync(metaFile)) as Cache) : null;
const { keys, index, clock: madeAt } = cached ?? (await generate());
clock.advance(madeAt - clock.now());
const fd = openSync(cacheFile, 'r');
const bundleOf = (round: number, i: number): Uint8Array => {
  const [offset, length] = (index[round] as [number, number][])[i] as [number, number];
  const b = new Uint8Array(length);
  readSync(fd, b, 0, length, offset);
  return b;
};

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

/**
 * One round through the hop API, BATCH bundles per POST, in `lanes` concurrent pushers (lane l pushes
 * every lanes-th batch to targets[l % targets.length]); `onAck` is told each batch's sites.
 */
async function round(
  r: number,
  targets: BenchHub[],
  lanes: number,
  onAck?: (sites: string[], at: number) => void,
): Promise<number> {
  const t0 = performance.now();
  const starts = Array.from({ length: Math.ceil(sites / BATCH) }, (_, b) => b * BATCH);
  const lane = async (l: number) => {
    const hop = (targets[l % targets.length] as BenchHub).urls.hop;
    for (let b = l; b < starts.length; b += lanes) {
      const i = starts[b] as number;
      const list: Uint8Array[] = [];
      for (let k = i; k < Math.min(sites, i + BATCH); k++) list.push(bundleOf(r, k));
      const res = await fetch(`${hop}/v1/bundles`, {
        method: 'POST',
        headers: { authorization: 'Bearer relay-token', 'content-type': BATCH_CONTENT_TYPE },
        body: encodeBatch(list) as Uint8Array<ArrayBuffer>,
      });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`push answered ${res.status}`);
      onAck?.(
        Array.from({ length: Math.min(sites, i + BATCH) - i }, (_, k) => siteOf(i + k)),
        performance.now(),
      );
    }
  };
  await Promise.all(Array.from({ length: lanes }, (_, l) => lane(l)));
  return Math.round((sites * cells) / ((performance.now() - t0) / 1000));
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

const windowSites = Array.from({ length: Math.min(sites, 30) }, (_, i) => siteOf(i)).join(',');
const views: Record<string, string> = {
  fleet: '/api/fleet',
  sites: '/api/sites?limit=100',
  sitesByProblems: '/api/sites?sort=problems&limit=100',
  matrixWindow: `/api/matrix?environment=prod&sites=${windowSites}`,
  matrixDrift: '/api/matrix?status=drift',
  matrixEnvironmentPage: '/api/matrix?environment=prod',
  site: `/api/sites/${siteOf(1)}`,
  cellRuns: `/api/cells/${siteOf(1)}/prod/comp-0/runs`,
};
const viewStats: Record<string, { p50Ms: number; p95Ms: number; wireBytes: number }> = {};
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
  viewStats[name] = { p50Ms: pct(ms, 50), p95Ms: pct(ms, 95), wireBytes: bytes };
}
say(`views: ${JSON.stringify(viewStats)}`);
const paint = values['skip-browser'] || hubCount > 1 ? null : await firstPaint(urls.api, viewer.token, uiDir);
say(`first paint: ${JSON.stringify(paint)}`);
const rssAfterViews = rss();
await endPhase('round2');

// Round 2 alone: one hub (with two hubs: one of them, pushed in two lanes as the two-hub round is).
await advance(60_000);
const ingestAlone = await round(1, [hubA], hubs.length);
say(`round 2 alone: ${ingestAlone} results/s`);
await endPhase('round3');

// One hub: 10 dashboards on the event stream, the delay from each batch's ack to its fleet-moved at each
// client. Two hubs: round 3 split between them, no dashboards.
const live = liveClients(
  `${urls.api}/api/events`,
  viewer.authorization,
  hubCount > 1 ? 0 : Number(values['live-clients']),
);
await new Promise((r) => setTimeout(r, 500));
await advance(60_000);
const round3 = await round(2, hubs, hubs.length, live.acked);
await new Promise((r) => setTimeout(r, 2000));
live.close();
await endPhase('round3'); // records round 3 (the phase after it is never measured)
clearInterval(rssTimer);
const hwm = Math.max(...[...new Set(hubs.map((h) => h.pid))].map((pid) => procStatusMb(pid).hwm));
const ratio = (a: number, b: number) => Math.round((a / b) * 100) / 100;
const result = {
  store: pg ? 'postgres' : 'sqlite',
  hubs: hubCount,
  hubProcess: program !== null,
  sites,
  cells,
  fillResultsPerSec: fillRate,
  ...(hubCount > 1
    ? {
        ingestResultsPerSec: { oneHub: ingestAlone, twoHubs: round3 },
        twoHubRatio: ratio(round3, ingestAlone),
      }
    : {
        views: viewStats,
        firstPaint: paint,
        // `with10Clients` keeps its name; `liveClients` says how many there were (`--live-clients`).
        liveClients: Number(values['live-clients']),
        ingestResultsPerSec: { alone: ingestAlone, with10Clients: round3 },
        ingestWithClientsRatio: ratio(round3, ingestAlone),
        liveDelayMs: {
          p50: pct(live.delays, 50),
          p95: pct(live.delays, 95),
          samples: live.delays.length,
          batches: live.batches(),
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
