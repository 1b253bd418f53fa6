import { describe, expect, it } from 'vitest';
import { exposedGc, memoryRelief } from './memoryRelief.js';

const MiB = 1024 * 1024;

function fake(start: number) {
  const s = { external: start, t: 0, gcs: 0, freed: 0 };
  const relieve = memoryRelief({
    gc: () => {
      s.gcs++;
      s.external -= s.freed;
    },
    external: () => s.external,
    now: () => s.t,
    slackBytes: 24 * MiB,
    minIntervalMs: 250,
  });
  return { s, relieve };
}

describe('memoryRelief', () => {
  it('collects once the bytes outside the heap pass the slack, not before', () => {
    const { s, relieve } = fake(3 * MiB);
    s.external = 26 * MiB;
    expect(relieve()).toBe(false);
    s.external = 28 * MiB;
    s.freed = 24 * MiB;
    expect(relieve()).toBe(true);
    expect(s.external).toBe(4 * MiB);
  });

  it('waits minIntervalMs between collections, longer when they free little, and counts the slack from what stayed live', () => {
    const { s, relieve } = fake(0);
    s.external = 40 * MiB;
    s.freed = 1 * MiB; // live uploads: little to free
    expect(relieve()).toBe(true); // 39 MiB stay live: the slack now counts from there
    s.t = 300;
    expect(relieve()).toBe(false); // still 39 MiB: nothing piled up since, no collection for nothing
    s.external = 60 * MiB; // +21 MiB: under the slack
    expect(relieve()).toBe(false);
    s.external = 64 * MiB; // +25 MiB
    s.t = 400;
    expect(relieve()).toBe(false); // the interval doubled to 500 ms
    s.t = 600;
    s.freed = 30 * MiB;
    expect(relieve()).toBe(true); // freed much: back to 250 ms, 34 MiB live
    s.external = 60 * MiB;
    s.t = 850;
    expect(relieve()).toBe(true);
    expect(s.gcs).toBe(3);
  });

  it('does nothing without an exposed gc (the source run)', () => {
    const relieve = memoryRelief({ external: () => 500 * MiB });
    expect(relieve()).toBe(false);
    expect(typeof exposedGc() === 'function' || exposedGc() === undefined).toBe(true);
  });
});
