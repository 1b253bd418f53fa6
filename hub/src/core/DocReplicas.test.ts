import { describe, expect, it } from 'vitest';
import { MemoryHubStore } from '../adapters/memory/MemoryHubStore.js';
import { DocReplicas } from './DocReplicas.js';
import { HeapHeadroom } from './HeapHeadroom.js';

describe('DocReplicas', () => {
  it("drops the least recently used quarter when Automerge's heap passes its limit and grows", async () => {
    let heap = 100;
    const replicas = new DocReplicas(
      new MemoryHubStore(),
      5000,
      40_000_000,
      new HeapHeadroom(() => heap, 1000),
    );
    for (let i = 0; i < 8; i++) await replicas.handle(`s/a${i}/epoch-1`);
    replicas.settle([]);
    expect(replicas.size().docs).toBe(8); // under the limit
    heap = 1500;
    replicas.settle([]);
    expect(replicas.size().docs).toBe(6); // past it: 2 of 8 dropped
    replicas.settle([]);
    expect(replicas.size().docs).toBe(6); // not grown since: memory freed is reused first
    heap = 1600;
    replicas.settle([]);
    expect(replicas.size().docs).toBe(4);
  });
});
