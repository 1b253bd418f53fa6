/**
 * The build and the test lanes (issue 40, docs/decisions/440-compiled-programs.md): the bins run what
 * `npm run build` compiled, a source newer than its output is reported stale, and `npm run test:unit`
 * keeps out the files that start processes.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../src/topology/programs.js';

const node = (args: string[], cwd = ROOT, env: NodeJS.ProcessEnv = {}) =>
  spawnSync(process.execPath, args, { cwd, encoding: 'utf8', env: { ...process.env, ...env } });

const tmp: string[] = [];
afterAll(() => {
  for (const d of tmp) rmSync(d, { recursive: true, force: true });
});

// Hang guards only: each case starts node a few times, which takes seconds beside a full run.
describe('npm run build', { timeout: 120_000 }, () => {
  it('leaves each program compiled beside its metafile, and the bins run it', () => {
    const hub = node(['hub/bin/hub.js', '--version']);
    expect(hub.status).toBe(0);
    expect(hub.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
    expect(node(['scripts/build.mjs', '--check', '--programs']).status).toBe(0);
  });

  it('reports a program stale when one of its sources is newer than the compiled file', () => {
    // A copy of the build's own inputs: the checkout's files are never touched by a test.
    const dir = mkdtempSync(join(tmpdir(), 'driftline-build-'));
    tmp.push(dir);
    for (const p of ['scripts', 'hub', 'relay', 'edge-agent', 'simulation', 'protocol', 'hop'])
      cpSync(join(ROOT, p), join(dir, p), {
        recursive: true,
        preserveTimestamps: true,
        filter: (s) => !s.includes('node_modules') && !s.includes('/test/'),
      });
    expect(node(['scripts/build.mjs', '--check', '--programs'], dir).status).toBe(0);
    const later = new Date(Date.now() + 60_000);
    utimesSync(join(dir, 'protocol', 'src', 'index.ts'), later, later);
    const r = node(['scripts/build.mjs', '--check', '--programs'], dir);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('hub/dist/hub.mjs');
    expect(r.stderr).toContain('run npm run build');
  });

  it('says how to build when a program was never built', () => {
    const dir = mkdtempSync(join(tmpdir(), 'driftline-unbuilt-'));
    tmp.push(dir);
    cpSync(join(ROOT, 'relay', 'bin'), join(dir, 'relay', 'bin'), { recursive: true });
    const r = node([join(dir, 'relay', 'bin', 'relay.js'), '--version']);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('relay: not built: run `npm run build`');
  });
});

describe('npm run test:unit', { timeout: 120_000 }, () => {
  it('runs the files that start no process and leaves out those that do', () => {
    const unit = node(['scripts/test-lanes.mjs', '--list']).stdout.split('\n');
    const processes = node(['scripts/test-lanes.mjs', '--list', '--processes']).stdout.split('\n');
    expect(unit).toContain('protocol/src/custody.test.ts');
    expect(unit).not.toContain('simulation/test/apply.test.ts');
    expect(processes).toContain('simulation/test/apply.test.ts');
    expect(processes).toContain('simulation/test/buildLanes.test.ts');
    expect(unit.length).toBeGreaterThan(processes.length);
  });
});
