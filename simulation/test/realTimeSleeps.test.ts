import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../src/topology/programs.js';

/**
 * The default lane waits on events or virtual time, never on the wall clock (issue 56;
 * docs/decisions/540-deterministic-world.md): a sleep of real time is a coin toss on a loaded machine. This
 * is a ratchet. The files listed below would still sleep (`await new Promise((r) => setTimeout(r, ms))` and its
 * forms), each a file to move onto events or the world's clock; none is left. A file not on the list that
 * sleeps fails here, and so does a listed file that no longer does (take it off: the list only shrinks). World tests
 * (`simulation/src/world/`, `*.world.test.ts`) are not counted: their timers are the world's.
 */
const STILL_SLEEPING: string[] = [];

const SLEEP =
  /setTimeout\(\s*(r|res|resolve)\s*,\s*[\d_]+\s*\)|new Promise\(\(?\s*(r|res|resolve)\s*\)?\s*=>\s*setTimeout\(/;
const WORKSPACES = ['protocol', 'hop', 'edge-agent', 'relay', 'hub', 'ui', 'simulation'];

/** Every test file of the default lane: the workspaces' own, the world's, the hostile suite's world files. */
function defaultLaneFiles(): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.name === 'node_modules' || e.name === 'dist') continue;
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.test\.tsx?$/.test(e.name)) out.push(relative(ROOT, p));
    }
  };
  for (const w of WORKSPACES) walk(join(ROOT, w));
  // the simulation's test/ is the process lane, but for the files moved onto the world
  return out.filter((f) => !f.startsWith('simulation/test/') || f.endsWith('.world.test.ts')).sort();
}

describe('the default lane and the wall clock', () => {
  const files = defaultLaneFiles();
  const isWorld = (f: string) => f.startsWith('simulation/src/world/') || f.endsWith('.world.test.ts');
  const sleeping = files.filter((f) => !isWorld(f) && SLEEP.test(readFileSync(join(ROOT, f), 'utf8')));

  it('reads the lane: the workspaces, the world and the hostile files moved onto it', () => {
    expect(files.length).toBeGreaterThan(200);
    expect(files.filter(isWorld).length).toBeGreaterThan(20);
  });

  it('has no file that sleeps on real time but those still listed', () => {
    expect(
      sleeping.filter((f) => !STILL_SLEEPING.includes(f)),
      'a default-lane file sleeps on real time: wait on an event, or run it in the world',
    ).toEqual([]);
  });

  it('lists no file that has stopped sleeping (the list only shrinks)', () => {
    expect(STILL_SLEEPING.filter((f) => !sleeping.includes(f))).toEqual([]);
  });
});
