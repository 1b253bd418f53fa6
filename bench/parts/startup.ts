/**
 * startup (issue 40): how long each program takes to answer `--version`, compiled (`npm run build`, what
 * the bin entries run) and from its TypeScript sources through tsx (`DRIFTLINE_FROM_SOURCE=1`, as before
 * decision 440), beside bare `node -e 0` in the same run. The median of `--runs=N` (default 7; 3 quick)
 * of wall and CPU (user + system, steadier on a shared machine) per program. Goal: ≤ 600 ms wall compiled.
 */
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { emit, isQuick } from '../lib/agent.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const runsArg = process.argv.find((a) => a.startsWith('--runs='));
const RUNS = runsArg ? Number(runsArg.slice(7)) : isQuick ? 3 : 7;

const build = spawnSync(process.execPath, [
  join(root, 'scripts/build.mjs'),
  '--if-stale',
  '--programs',
  '--quiet',
]);
if (build.status !== 0) throw new Error(`npm run build failed: ${build.stderr}`);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

/** Wall and CPU ms of `node <args>`, the median of RUNS (CPU from the child's own rusage). */
function time(args: string[], env: NodeJS.ProcessEnv = {}): { wallMs: number; cpuMs: number } {
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t = process.hrtime.bigint();
    const r = spawnSync('/usr/bin/time', ['-f', '%U %S', process.execPath, ...args], {
      cwd: root,
      env: { ...process.env, ...env },
      encoding: 'utf8',
    });
    wall.push(Number(process.hrtime.bigint() - t) / 1e6);
    if (r.status !== 0) throw new Error(`node ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
    const [u, s] = r.stderr.trim().split('\n').at(-1)?.split(' ').map(Number) ?? [0, 0];
    cpu.push(((u ?? 0) + (s ?? 0)) * 1000);
  }
  return { wallMs: Math.round(median(wall)), cpuMs: Math.round(median(cpu)) };
}

const programs = {
  hub: 'hub/bin/hub.js',
  relay: 'relay/bin/relay.js',
  edgeAgent: 'edge-agent/bin/edge-agent.js',
};
const bareNode = time(['-e', '0']);
const compiled: Record<string, { wallMs: number; cpuMs: number }> = {};
const fromSource: Record<string, { wallMs: number; cpuMs: number }> = {};
for (const [name, bin] of Object.entries(programs)) {
  compiled[name] = time([bin, '--version']);
  fromSource[name] = time([bin, '--version'], { DRIFTLINE_FROM_SOURCE: '1' });
  process.stderr.write(
    `[startup] ${name} --version: compiled ${compiled[name]?.wallMs} ms (${compiled[name]?.cpuMs} ms CPU), from source ${fromSource[name]?.wallMs} ms (${fromSource[name]?.cpuMs} ms CPU); bare node ${bareNode.wallMs} ms\n`,
  );
}
const worst = Math.max(...Object.values(compiled).map((c) => c.wallMs));
emit({ runs: RUNS, bareNode, compiled, fromSource, pass: { versionWithin600Ms: worst <= 600 } });
