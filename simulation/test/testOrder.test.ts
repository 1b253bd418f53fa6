/**
 * The order the suite starts its files in (issue 40, docs/decisions/441-longest-files-first.md): the
 * longest first, whichever workspace they are in, so no file of minutes starts last.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadWeights, longestFirst } from '../../scripts/longestFirst.js';

type F = { name: string; failed?: boolean; seconds?: number; size: number };
const order = (files: F[]) =>
  longestFirst(files, (f) => ({ failed: f.failed === true, seconds: f.seconds, size: f.size })).map(
    (f) => f.name,
  );

describe('longest files first', () => {
  it('starts a failed file, then the known ones by seconds, then the unknown ones by size', () => {
    expect(
      order([
        { name: 'hub unit', seconds: 1, size: 9000 },
        { name: 'unknown small', size: 10 },
        { name: 'contact plan e2e', seconds: 344, size: 100 },
        { name: 'unknown large', size: 5000 },
        { name: 'failed last time', failed: true, seconds: 2, size: 1 },
        { name: 'act loop', seconds: 93, size: 200 },
      ]),
    ).toEqual([
      'failed last time',
      'contact plan e2e',
      'act loop',
      'hub unit',
      'unknown large',
      'unknown small',
    ]);
  });

  it('reads the committed weights, and none where the file is missing or broken', () => {
    const dir = mkdtempSync(join(tmpdir(), 'weights-'));
    try {
      writeFileSync(join(dir, 'w.json'), '{"simulation/test/a.test.ts": 12}');
      writeFileSync(join(dir, 'broken.json'), '{"simulation/te');
      expect(loadWeights(join(dir, 'w.json'))).toEqual({ 'simulation/test/a.test.ts': 12 });
      expect(loadWeights(join(dir, 'broken.json'))).toEqual({});
      expect(loadWeights(join(dir, 'missing.json'))).toEqual({});
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('has a weight for every file that took minutes in the last measured run', () => {
    const weights = loadWeights(join(import.meta.dirname, '../../scripts/test-weights.json'));
    expect(Object.keys(weights).length).toBeGreaterThan(10);
    expect(weights['simulation/test/compose.test.ts']).toBeGreaterThan(60);
  });

  it('has a weight for every file that starts a whole topology, as processes or a world, so none starts last', () => {
    // A file no weight names starts after every named one (a clean clone has no vitest cache): a new
    // file of a minute that waits on links then ends the run alone (mixedWire and hostile/wire2 did).
    const root = join(import.meta.dirname, '../..');
    const weights = loadWeights(join(root, 'scripts/test-weights.json'));
    const topologies = readdirSync(join(root, 'simulation/test'), { recursive: true, encoding: 'utf8' })
      .map((f) => `simulation/test/${f}`)
      .filter((f) => f.endsWith('.test.ts'))
      // every world file, whatever starts its world, and every file that starts processes or a world
      .filter(
        (f) =>
          f.endsWith('.world.test.ts') ||
          /\b(start\w*(World|Site|Headquarters)|Topology\.start)\(/.test(readFileSync(join(root, f), 'utf8')),
      );
    expect(topologies.length).toBeGreaterThan(10);
    expect(topologies.filter((f) => weights[f] === undefined)).toEqual([]);
  });
});
