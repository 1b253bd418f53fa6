import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { FleetFigures, Spread } from './fleetFigures.js';
import { runWorld, WORLD_FAULTS, type WorldFault, type WorldReport } from './runWorld.js';
import { loadTopology, type Topology } from './topologyFile.js';

const MAX_SITES = 1000;
const MAX_DAYS = 60;

export interface WorldCliOptions {
  seed: string;
  sites: string;
  days: string;
  faults: string;
  /** Where to write the JSON report; none: printed only. */
  report: string | undefined;
  /** A topology file (`topologyFile.ts`): its sites instead of `sites` uniform ones. */
  topology?: string;
}

/** Sites listed one a line in the summary; more are summed up as p50/p95/max over the sites. */
const LISTED_SITES = 20;

/**
 * `npm run sim -- --seed S --sites N --days D [--faults …]`: checks the arguments, runs the world and
 * prints its invariants, figures, digest and the command that replays it. Exit 0 when every invariant
 * held, 1 when one broke, 2 on a usage error. The world's thread pool must be one thread for its digest to
 * replay (docs/decisions/540-deterministic-world.md): run without it, the command runs itself again with it.
 */
export async function runWorldCli(o: WorldCliOptions): Promise<number> {
  const problems: string[] = [];
  const seed = whole(o.seed, 0, Number.MAX_SAFE_INTEGER, '--seed', problems);
  let topology: Topology | undefined;
  if (o.topology !== undefined) {
    const t = loadTopology(o.topology);
    if (t.ok) topology = t.topology;
    else problems.push(...t.problems);
  }
  const sites = topology ? topology.spec.siteSpecs.length : whole(o.sites, 1, MAX_SITES, '--sites', problems);
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
    `sim: world seed ${seed}, ${topology ? `topology ${topology.file}${topology.description ? ` (${topology.description})` : ''}, ` : ''}${sites} sites, ${days} days${faults.length ? `, faults ${faults.join(',')}` : ''}\n`,
  );
  const report = await runWorld({
    seed,
    sites,
    days,
    faults: faults as WorldFault[],
    ...(topology ? { topology } : {}),
  });
  process.stdout.write(summary(report));
  if (o.report) {
    mkdirSync(dirname(resolve(o.report)), { recursive: true });
    writeFileSync(o.report, `${JSON.stringify(report, null, 2)}\n`);
  }
  return report.held ? 0 : 1;
}

const dur = (ms: number) => {
  const m = Math.round(ms / 60_000);
  return m < 60 ? `${m}m` : `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
};
const spreadText = (s: Spread, f: (n: number) => string) => `p50 ${f(s.p50)} p95 ${f(s.p95)} max ${f(s.max)}`;
const kB = (n: number) => (n >= 10_000_000 ? `${(n / 1e6).toFixed(0)} MB` : `${(n / 1000).toFixed(1)} kB`);

/**
 * The hub's ages per site and each link's bytes per day: one line a site and a link up to
 * {@link LISTED_SITES} sites, else p50/p95/max over the sites and the links.
 */
export function fleetLines(f: FleetFigures): string[] {
  const lines: string[] = [];
  const missing = f.sites.length - f.fleet.sitesWithEveryCell;
  if (f.sites.length <= LISTED_SITES) {
    lines.push(
      "age of the hub's oldest fact per site (every 5 min of the days, from the first time it had every cell):",
    );
    for (const s of f.sites)
      lines.push(
        s.ageMs
          ? `  ${s.site.padEnd(16)} ${spreadText(s.ageMs, dur)}, at the end ${dur(s.ageAtEndMs ?? 0)}; every cell at the hub after ${dur(s.allCellsAtHubMs ?? 0)}`
          : `  ${s.site.padEnd(16)} ${s.cells === 0 ? 'nothing' : `only ${s.cells} cells`} at the hub by the end of the days`,
      );
  } else {
    const a = f.fleet;
    lines.push(
      `age of the hub's oldest fact per site, over ${f.sites.length} sites (${a.sitesWithEveryCell} with every cell at the hub):`,
      ...(a.ageP95 ? [`  each site's p95: ${spreadText(a.ageP95, dur)}`] : []),
      ...(a.ageMax ? [`  each site's max: ${spreadText(a.ageMax, dur)}`] : []),
      ...(a.ageAtEnd ? [`  at the end:      ${spreadText(a.ageAtEnd, dur)}`] : []),
    );
  }
  if (missing > 0 && f.sites.length > LISTED_SITES)
    lines.push(`  ${missing} sites never had every cell at the hub by the end of the days`);
  const relayLinks = f.links.filter((l) => l.link.endsWith('>hub'));
  const siteLinks = f.links.filter((l) => !l.link.endsWith('>hub'));
  lines.push('bytes per link per day (requests up / answers down, over the days):');
  if (siteLinks.length <= LISTED_SITES)
    for (const l of siteLinks)
      lines.push(`  ${l.link.padEnd(24)} up ${kB(l.upPerDay)} down ${kB(l.downPerDay)}`);
  else {
    const over = (k: 'upPerDay' | 'downPerDay') => {
      const v = siteLinks.map((l) => l[k]).sort((a, b) => a - b);
      const rank = (p: number) => v[Math.min(v.length - 1, Math.ceil(p * v.length) - 1)] as number;
      return `p50 ${kB(rank(0.5))} p95 ${kB(rank(0.95))} max ${kB(v[v.length - 1] as number)}`;
    };
    lines.push(`  ${siteLinks.length} site links: up ${over('upPerDay')}; down ${over('downPerDay')}`);
  }
  for (const l of relayLinks)
    lines.push(`  ${l.link.padEnd(24)} up ${kB(l.upPerDay)} down ${kB(l.downPerDay)}`);
  return lines;
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
    ...fleetLines(r.fleet),
    `network: ${JSON.stringify(r.network)}`,
    `steps: ${r.steps} events in ${(r.wallMs / 1000).toFixed(1)} s`,
    `seed: ${r.seed}`,
    `digest: ${r.digest}${r.replayable ? '' : ' (not replayable: the thread pool was not one thread)'}`,
    r.held ? `replay: ${r.replay}` : `FAILED: replay with: ${r.replay}`,
  ];
  return `${lines.join('\n')}\n`;
}
