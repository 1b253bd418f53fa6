import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { runWorld, WORLD_FAULTS, type WorldFault, type WorldReport } from './runWorld.js';

const MAX_SITES = 1000;
const MAX_DAYS = 60;

export interface WorldCliOptions {
  seed: string;
  sites: string;
  days: string;
  faults: string;
  /** Where to write the JSON report; none: printed only. */
  report: string | undefined;
}

/**
 * `npm run sim -- --seed S --sites N --days D [--faults …]`: checks the arguments, runs the world and
 * prints its invariants, figures, digest and the command that replays it. Exit 0 when every invariant
 * held, 1 when one broke, 2 on a usage error. The world's thread pool must be one thread for its digest to
 * replay (docs/decisions/540-deterministic-world.md): run without it, the command runs itself again with it.
 */
export async function runWorldCli(o: WorldCliOptions): Promise<number> {
  const problems: string[] = [];
  const seed = whole(o.seed, 0, Number.MAX_SAFE_INTEGER, '--seed', problems);
  const sites = whole(o.sites, 1, MAX_SITES, '--sites', problems);
  const days = Number(o.days);
  if (!Number.isFinite(days) || days <= 0 || days > MAX_DAYS)
    problems.push(
      `--days '${o.days}': give a number of days above 0, at most ${MAX_DAYS} (fractions: 0.5 is 12 hours)`,
    );
  const faults = o.faults
    .split(',')
    .map((f) => f.trim())
    .filter((f) => f !== '');
  for (const f of faults)
    if (!(f in WORLD_FAULTS))
      problems.push(
        `--faults '${f}': not a fault the world has yet; known: ${Object.keys(WORLD_FAULTS).join(', ')}`,
      );
  if (problems.length > 0) {
    for (const p of problems) process.stderr.write(`sim: ${p}\n`);
    return 2;
  }
  if (process.env.UV_THREADPOOL_SIZE !== '1') {
    const again = spawnSync(process.execPath, [...process.execArgv, ...process.argv.slice(1)], {
      stdio: 'inherit',
      env: { ...process.env, UV_THREADPOOL_SIZE: '1' },
    });
    return again.status ?? 1;
  }
  process.stderr.write(
    `sim: world seed ${seed}, ${sites} sites, ${days} days${faults.length ? `, faults ${faults.join(',')}` : ''}\n`,
  );
  const report = await runWorld({ seed, sites, days, faults: faults as WorldFault[] });
  process.stdout.write(summary(report));
  if (o.report) {
    mkdirSync(dirname(resolve(o.report)), { recursive: true });
    writeFileSync(o.report, `${JSON.stringify(report, null, 2)}\n`);
  }
  return report.held ? 0 : 1;
}

function whole(v: string, min: number, max: number, flag: string, problems: string[]): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < min || n > max)
    problems.push(`${flag} '${v}': give a whole number from ${min} to ${max}`);
  return n;
}

/** The report as an operator reads it: each invariant, the figures, the digest, the replay. */
export function summary(r: WorldReport): string {
  const lines = [
    ...r.invariants.map((i) => `${i.held ? 'held  ' : 'BROKEN'}  ${i.name}: ${i.detail}`),
    `figures: ${JSON.stringify(r.figures)}`,
    `network: ${JSON.stringify(r.network)}`,
    `steps: ${r.steps} events in ${(r.wallMs / 1000).toFixed(1)} s`,
    `seed: ${r.seed}`,
    `digest: ${r.digest}${r.replayable ? '' : ' (not replayable: the thread pool was not one thread)'}`,
    r.held ? `replay: ${r.replay}` : `FAILED: replay with: ${r.replay}`,
  ];
  return `${lines.join('\n')}\n`;
}
