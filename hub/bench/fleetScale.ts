/**
 * Fleet-scale benchmark (not a test; issue 41, decisions 400–402): a real hub filled through its hop API
 * as a fleet fills it, then each dashboard view's API answer timed (p50/p95) and weighed (bytes on the
 * wire, br), ingest rate of a round with and without 10 live dashboards, how long after the hub's ack a
 * dashboard hears of the batch (`fleet-moved`), and the process's RSS (the hub runs in it; from the cache
 * nothing else is held).
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
import pino from 'pino';
import { sha256Hex } from '../src/adapters/http/credentials.js';
import { PgDatabase } from '../src/adapters/postgres/PgDatabase.js';
import { PostgresHubStore } from '../src/adapters/postgres/PostgresHubStore.js';
import { createHub } from '../src/app.js';
import { parseConfig } from '../src/config.js';
import { enrol } from '../src/core/enrolment.js';
import { TestClock } from '../test/agentSim.js';
import { PgServer } from '../test/postgres.js';
import { addTestUser } from '../test/users.js';
import { FastAgentDoc, type RunSpec } from './agentDocs.js';
import { firstPaint } from './firstPaint.js';

const { values } = parseArgs({
  options: {
    sites: { type: 'string', default: '1000' },
    cells: { type: 'string', default: '200' },
    quick: { type: 'boolean', default: false },
    store: { type: 'string', default: 'sqlite' },
    cache: { type: 'string' },
    reads: { type: 'string', default: '12' },
    'skip-browser': { type: 'boolean', default: false },
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
const dir = mkdtempSync(join(tmpdir(), 'fleet-scale-'));
const cfg = parseConfig(
  { dataDir: dir, uiDir, listen: { host: '127.0.0.1', port: 0 }, sweepIntervalS: 15 },
  dir,
  {},
);
if (!cfg.ok) throw new Error(cfg.errors.join('; '));
const store = pg
  ? new PostgresHubStore(new PgDatabase({ url: await pg.createDatabase(), password: pg.password }))
  : undefined;
const hub = await createHub(cfg.config, {
  clock,
  logger: pino({ level: 'silent' }),
  ...(store ? { store } : {}),
});
const urls = await hub.listen();
hub.startTimers();
await hub.store.commit({ peers: [{ tokenSha256: sha256Hex('relay-token'), name: 'relay-1', sites: ['*'] }] });
for (let i = 0; i < sites; i++)
  await enrol(hub.store, { site: siteOf(i), agent: 'a1', key: keys[i] as string }, clock.now() - 1000);
const viewer = await addTestUser(hub.store, 'bench', ['viewer']);
let peakRss = 0;
const rss = () => {
  const r = Math.round(process.memoryUsage().rss / 1048576);
  peakRss = Math.max(peakRss, r);
  return r;
};
const rssTimer = setInterval(rss, 200);

/** One round through the hop API, BATCH bundles per POST; `onAck` is told each batch's sites. */
async function round(r: number, onAck?: (sites: string[], at: number) => void): Promise<number> {
  const t0 = performance.now();
  for (let i = 0; i < sites; i += BATCH) {
    const list: Uint8Array[] = [];
    for (let k = i; k < Math.min(sites, i + BATCH); k++) list.push(bundleOf(r, k));
    const res = await fetch(`${urls.hop}/v1/bundles`, {
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
  return Math.round((sites * cells) / ((performance.now() - t0) / 1000));
}

/** GET with br: status, wire bytes, ms. */
function get(path: string): Promise<{ status: number; bytes: number; ms: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = request(
      `${urls.api}${path}`,
      { headers: { authorization: viewer.authorization, 'accept-encoding': 'br, gzip' } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () => {
          const body = Buffer.concat(chunks);
          resolve({ status: res.statusCode ?? 0, bytes: body.length, ms: performance.now() - t0, body });
        });
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

say(`${pg ? 'postgres' : 'sqlite'}: filling ${sites}×${cells} through the hop API`);
const fillRate = await round(0);
say(`filled at ${fillRate} results/s, rss ${rss()} MB`);
await hub.sweeper.sweep();

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
const viewStats: Record<string, { p50Ms: number; p95Ms: number; wireBytes: number; cells?: number }> = {};
for (const [name, path] of Object.entries(views)) {
  const ms: number[] = [];
  let last: { status: number; bytes: number; ms: number; body: Buffer } = {
    status: 0,
    bytes: 0,
    ms: 0,
    body: Buffer.alloc(0),
  };
  for (let k = 0; k < Number(values.reads); k++) {
    last = await get(path);
    if (last.status !== 200) throw new Error(`${path} answered ${last.status}`);
    ms.push(last.ms);
  }
  viewStats[name] = { p50Ms: pct(ms, 50), p95Ms: pct(ms, 95), wireBytes: last.bytes };
}
say(`views: ${JSON.stringify(viewStats)}`);
const paint = values['skip-browser'] ? null : await firstPaint(urls.api, viewer.token, uiDir);
say(`first paint: ${JSON.stringify(paint)}`);
const rssAfterViews = rss();

clock.advance(60_000);
const ingestAlone = await round(1);
say(`round 2 alone: ${ingestAlone} results/s`);

// 10 dashboards on the event stream; the delay from each batch's ack to its fleet-moved at each client.
const acks: { sites: Set<string>; at: number; seen: number }[] = [];
const delays: number[] = [];
const clients = Array.from({ length: 10 }, () => {
  const req = request(
    `${urls.api}/api/events`,
    { headers: { authorization: viewer.authorization } },
    (res) => {
      let buf = '';
      res.on('data', (d: Buffer) => {
        buf += d.toString();
        for (let end = buf.indexOf('\n\n'); end >= 0; end = buf.indexOf('\n\n')) {
          const frame = buf.slice(0, end);
          buf = buf.slice(end + 2);
          const data = frame.split('\n').find((l) => l.startsWith('data: '));
          if (!data || !frame.includes('event: fleet-moved')) continue;
          const e = JSON.parse(data.slice(6)) as { sites: string[] };
          const now = performance.now();
          for (const a of acks)
            if (e.sites.some((s) => a.sites.has(s)) && a.seen < 10) {
              a.seen++;
              delays.push(now - a.at);
            }
        }
      });
    },
  );
  req.end();
  return req;
});
await new Promise((r) => setTimeout(r, 500));
clock.advance(60_000);
const ingestWithClients = await round(2, (s, at) => acks.push({ sites: new Set(s), at, seen: 0 }));
await new Promise((r) => setTimeout(r, 2000));
for (const c of clients) c.destroy();
clearInterval(rssTimer);
const result = {
  store: pg ? 'postgres' : 'sqlite',
  sites,
  cells,
  fillResultsPerSec: fillRate,
  views: viewStats,
  firstPaint: paint,
  ingestResultsPerSec: { alone: ingestAlone, with10Clients: ingestWithClients },
  ingestWithClientsRatio: Math.round((ingestWithClients / ingestAlone) * 100) / 100,
  liveDelayMs: { p50: pct(delays, 50), p95: pct(delays, 95), samples: delays.length, batches: acks.length },
  rssMb: { afterViews: rssAfterViews, peak: peakRss },
};
await hub.close();
if (pg) await pg.stop();
rmSync(dir, { recursive: true, force: true });
console.log(JSON.stringify(result));
process.exit(0);
