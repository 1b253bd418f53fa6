import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { MemoryCustody } from './adapters/memory/MemoryCustody.js';
import { createRelayMetrics } from './metrics.js';

describe('relay metrics', () => {
  it('counts the blobs each upstream has set aside until their time is over', async () => {
    const custody = new MemoryCustody();
    const clock = { now: () => 1000 };
    const registry = new Registry();
    createRelayMetrics(registry, custody, clock, '.', ['hub', 'relay-b']);
    custody.blobs.record('a'.repeat(64), 10, '/blobs/a', {}, 'ship-7', 0);
    custody.blobs.record('b'.repeat(64), 10, '/blobs/b', {}, 'ship-7', 1);
    custody.blobs.setAside('a'.repeat(64), 'hub', 5000, 'HTTP 413');
    custody.blobs.setAside('b'.repeat(64), 'hub', 500, 'HTTP 413'); // its time is over
    const text = await registry.getSingleMetricAsString('driftline_relay_blobs_set_aside');
    expect(text).toContain('driftline_relay_blobs_set_aside{upstream="hub"} 1');
    expect(text).toContain('driftline_relay_blobs_set_aside{upstream="relay-b"} 0');
  });
});
