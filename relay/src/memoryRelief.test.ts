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

  it('counts the slack from the lowest reading since the last collection, which V8 frees while sweeping', () => {
    const { s, relieve } = fake(0);
    s.external = 40 * MiB;
    expect(relieve()).toBe(true);
    s.t = 300;
    s.external = 30 * MiB; // swept after the collection: 30 MiB stay live (uploads in flight)
    expect(relieve()).toBe(false);
    s.external = 50 * MiB; // +20 MiB over what stayed live: under the slack
    expect(relieve()).toBe(false);
    s.external = 55 * MiB; // +25 MiB
    expect(relieve()).toBe(true);
    s.t = 320;
    s.external = 90 * MiB; // a collection that freed nothing counts again from where it ran...
    expect(relieve()).toBe(false); // ...and the next waits minIntervalMs
    s.t = 600;
    expect(relieve()).toBe(true);
    s.t = 900;
    s.external = 100 * MiB; // live buffers grew by less than the slack: no collection for nothing
    expect(relieve()).toBe(false);
    expect(s.gcs).toBe(3);
  });

  it('does nothing without an exposed gc (the source run)', () => {
    const relieve = memoryRelief({ external: () => 500 * MiB });
    expect(relieve()).toBe(false);
    expect(typeof exposedGc() === 'function' || exposedGc() === undefined).toBe(true);
  });
});
