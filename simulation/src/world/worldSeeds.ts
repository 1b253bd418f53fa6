import { spawn } from 'node:child_process';

/** Seeds one `--seeds` run may cover at most. */
const MAX_SEEDS = 1000;
/** Worlds run at once at most (each is one process on one core). */
const MAX_JOBS = 8;

export interface SeedsOptions {
  /** `a-b` (inclusive) or one seed. */
  seeds: string;
  jobs: string;
  sites: string;
  days: string;
  faults: string;
  /** A topology file (`--topology`): each seed runs its sites instead of `sites`. */
  topology?: string;
}

interface SeedOutcome {
  seed: number;
  code: number;
  digest: string;
  steps: string;
  broken: string[];
  replay: string;
}

/**
 * `npm run sim -- --seeds 1-20 --sites 3 --days 1 --faults …`: runs the world once per seed, each in its
 * own process (`sim --seed N`, which checks the arguments and pins the thread pool to one thread), `--jobs`
 * at a time, and prints a line per seed as it ends — its digest and events, or the invariants it broke and
 * the command that replays it — then one line for all. Exit 0 when every seed held, 1 when one broke, 2 on
 * a usage error (docs/decisions/540-deterministic-world.md, "Seeds in CI").
 */
export async function runSeedsCli(o: SeedsOptions, argv0: readonly string[]): Promise<number> {
  const range = parseRange(o.seeds);
  const jobs = Number(o.jobs);
  const problems: string[] = [];
  if (typeof range === 'string') problems.push(range);
  if (!Number.isInteger(jobs) || jobs < 1 || jobs > MAX_JOBS)
    problems.push(`--jobs '${o.jobs}': give a whole number from 1 to ${MAX_JOBS}`);
  if (problems.length > 0 || typeof range === 'string') {
    for (const p of problems) process.stderr.write(`sim: ${p}\n`);
    return 2;
  }
  const seeds = Array.from({ length: range.to - range.from + 1 }, (_, i) => range.from + i);
  const world = [
    ...(o.topology !== undefined ? ['--topology', o.topology] : ['--sites', o.sites]),
    '--days',
    o.days,
    ...(o.faults ? ['--faults', o.faults] : []),
  ];
  process.stderr.write(
    `sim: ${seeds.length} worlds (seeds ${range.from}-${range.to}), ${o.topology !== undefined ? `topology ${o.topology}` : `${o.sites} sites`}, ${o.days} days${o.faults ? `, faults ${o.faults}` : ''}, ${jobs} at a time\n`,
  );
  const started = Date.now();
  const outcomes: SeedOutcome[] = [];
  const queue = [...seeds];
  const worker = async () => {
    for (let seed = queue.shift(); seed !== undefined; seed = queue.shift()) {
      const out = await runOne(argv0, seed, world);
      outcomes.push(out);
      process.stdout.write(`${line(out)}\n`);
      if (out.code === 2) queue.length = 0;
    }
  };
  await Promise.all(Array.from({ length: Math.min(jobs, seeds.length) }, worker));
  const failed = outcomes.filter((x) => x.code !== 0).sort((a, b) => a.seed - b.seed);
  const wallS = ((Date.now() - started) / 1000).toFixed(0);
  process.stdout.write(
    failed.length === 0
      ? `seeds: all ${outcomes.length} held (${wallS} s)\n`
      : `seeds: ${failed.length} of ${outcomes.length} FAILED (${wallS} s): ${failed.map((f) => f.seed).join(', ')}\n${failed.map((f) => `  replay: ${f.replay}`).join('\n')}\n`,
  );
  if (failed.some((f) => f.code === 2)) return 2;
  return failed.length === 0 ? 0 : 1;
}

function parseRange(v: string): { from: number; to: number } | string {
  const m = /^(\d{1,15})(?:-(\d{1,15}))?$/.exec(v.trim());
  const from = Number(m?.[1]);
  const to = m?.[2] === undefined ? from : Number(m[2]);
  if (!m || !Number.isSafeInteger(from) || !Number.isSafeInteger(to) || to < from)
    return `--seeds '${v}': give a seed or a range of seeds, low-high (e.g. 1-20)`;
  if (to - from + 1 > MAX_SEEDS) return `--seeds '${v}': at most ${MAX_SEEDS} seeds in one run`;
  return { from, to };
}

/** Runs `sim --seed <seed> …` as its own process and reads its summary (worldCli.ts's `summary`). */
function runOne(argv0: readonly string[], seed: number, world: readonly string[]): Promise<SeedOutcome> {
  return new Promise((resolve) => {
    const [cmd, ...args] = argv0 as [string, ...string[]];
    const child = spawn(cmd, [...args, '--seed', String(seed), ...world], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      err += d;
    });
    child.on('close', (code) => {
      const field = (name: string) => new RegExp(`^${name}: (.*)$`, 'm').exec(out)?.[1] ?? '';
      const broken = out
        .split('\n')
        .filter((l) => l.startsWith('BROKEN'))
        .map((l) => l.replace(/^BROKEN\s+/, ''));
      const replay = `npm run sim -- --seed ${seed} ${world.join(' ')}`;
      // a run that ended without a summary (a crash, a usage error): its own words, last lines first
      if (broken.length === 0 && code !== 0)
        broken.push(
          (err.trim().split('\n').slice(-3).join(' | ') || `exited ${code} without a summary`).slice(0, 400),
        );
      resolve({ seed, code: code ?? 1, digest: field('digest'), steps: field('steps'), broken, replay });
    });
  });
}

function line(o: SeedOutcome): string {
  if (o.code === 0) return `seed ${o.seed}: held, digest ${o.digest}, ${o.steps}`;
  return `seed ${o.seed}: FAILED (${o.broken.map((b) => b.split(':')[0]).join('; ')})\n  ${o.broken.join('\n  ')}\n  replay: ${o.replay}`;
}
