/**
 * The ingest benchmark on each store, in one run (not a test): the same cached bundles through one hub
 * on SQLite (hub/bench/ingest.ts, with its in-run baselines), one hub on PostgreSQL, and two hub
 * processes on one PostgreSQL database (each taking every other agent, both at once).
 *
 *   npx tsx hub/bench/ingestStores.ts <agents> <cells> --cache <file> [--batch 100]
 *
 * The cache must exist (`ingest.ts … --generate-only`). PostgreSQL is Debian's, started in a temp dir
 * by the tests' harness (hub/test/postgres.ts) with fsync on; without it the PostgreSQL parts report
 * `null` and say why. Prints one JSON object: each part's results/s and RSS per hub process, the
 * database's size after each PostgreSQL part, and the two ratios the goal is stated in.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { PG_BIN, PgServer } from '../test/postgres.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    cache: { type: 'string' },
    batch: { type: 'string', default: '100' },
  },
});
if (!values.cache) throw new Error('--cache <file> is required (make it with ingest.ts --generate-only)');
const [agents, cells] = [positionals[0] ?? '1000', positionals[1] ?? '200'];
const common = [agents, cells, '--batch', values.batch as string, '--cache', values.cache];
const ingest = join(import.meta.dirname, 'ingest.ts');

interface Part {
  resultsPerSec: number;
  rssMb: number;
  results: number;
  startedAt: number;
  endedAt: number;
  baseline?: unknown;
}

/** One ingest.ts process; its JSON line. */
function hub(args: string[]): Promise<Part> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', ingest, ...common, ...args], {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env },
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      const line = out.trim().split('\n').at(-1) ?? '';
      if (code === 0) resolve(JSON.parse(line) as Part);
      else reject(new Error(`ingest.ts ${args.join(' ')} exited ${code}`));
    });
  });
}

const say = (m: string) => process.stderr.write(`[ingestStores] ${m}\n`);
say('sqlite: one hub');
const sqlite = await hub([]);

let postgres: Record<string, unknown> | null = null;
let why: string | null = null;
if ('bin' in PG_BIN) {
  const server = await PgServer.start({ durable: true });
  try {
    const pw = join(server.dir, 'pw');
    const size = async (url: string) => {
      const c = await server.client(url);
      try {
        const r = await c.query('SELECT pg_database_size(current_database())::bigint AS n');
        return Math.round(Number(r.rows[0].n) / 1048576);
      } finally {
        await c.end();
      }
    };
    say('postgres: one hub');
    const url1 = await server.createDatabase();
    const one = await hub(['--store', 'postgres', '--url', url1, '--password-file', pw]);
    say('postgres: two hubs');
    const url2 = await server.createDatabase();
    const two = await Promise.all(
      ['0/2', '1/2'].map((s) =>
        hub(['--store', 'postgres', '--url', url2, '--password-file', pw, '--shard', s]),
      ),
    );
    const span = Math.max(...two.map((p) => p.endedAt)) - Math.min(...two.map((p) => p.startedAt));
    const twoRate = Math.round(two.reduce((n, p) => n + p.results, 0) / (span / 1000));
    postgres = {
      oneHub: { resultsPerSec: one.resultsPerSec, rssMb: one.rssMb, databaseMb: await size(url1) },
      twoHubs: {
        resultsPerSec: twoRate,
        perHub: two.map((p) => ({ resultsPerSec: p.resultsPerSec, rssMb: p.rssMb })),
        databaseMb: await size(url2),
      },
      oneHubVsSqlite: +(one.resultsPerSec / sqlite.resultsPerSec).toFixed(2),
      twoHubsVsOne: +(twoRate / one.resultsPerSec).toFixed(2),
    };
  } finally {
    await server.destroy();
  }
} else why = PG_BIN.reason;

console.log(
  JSON.stringify({
    bench: 'hub-ingest-stores',
    agents: Number(agents),
    cells: Number(cells),
    sqlite: { resultsPerSec: sqlite.resultsPerSec, rssMb: sqlite.rssMb, baseline: sqlite.baseline },
    postgres,
    ...(why ? { postgresSkipped: why } : {}),
  }),
);
