import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  READS_HUB_WINDOWS,
  READS_INLINE_PUBLICATIONS,
  READS_WIRE2_GIT_HEADS,
  READS_WIRE2_PUBLICATIONS,
  wire2,
} from '@driftline/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { Wire2State } from '../src/adapters/http/wire2State.js';
import type { CycleFacts } from '../src/core/cycle/PlanCycle.js';
import { followReads } from '../src/start/agentFacts.js';

/**
 * The agent tells the hub it reads compact publication manifests only while every upstream said, on its
 * v2 registration, that it carries them down (docs/decisions/505-compact-publications.md).
 */
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const urls = ['http://relay-a:7000', 'http://relay-b:7000'];
const v2 = (carries?: string[]) => ({ wire: 2 as const, node: 3, since: 1, ...(carries ? { carries } : {}) });

describe("the agent's reads fact", () => {
  it('names wire2-publications once every upstream carries them, and drops it when one stops', () => {
    const dir = mkdtempSync(join(tmpdir(), 'agent-reads-'));
    dirs.push(dir);
    const state = new Wire2State(join(dir, 'wire2-state.json'));
    const facts = { reads: [] } as unknown as CycleFacts;
    let changes = 0;
    followReads(facts, state, urls, () => changes++);
    expect(facts.reads).toEqual([READS_INLINE_PUBLICATIONS, READS_HUB_WINDOWS]);
    state.noteLink(urls[0] as string, v2([wire2.CARRIES_PUBLICATIONS]));
    expect([facts.reads, changes]).toEqual([[READS_INLINE_PUBLICATIONS, READS_HUB_WINDOWS], 0]);
    state.noteLink(urls[1] as string, v2([wire2.CARRIES_PUBLICATIONS]));
    expect([facts.reads, changes]).toEqual([
      [READS_INLINE_PUBLICATIONS, READS_HUB_WINDOWS, READS_WIRE2_PUBLICATIONS],
      1,
    ]);
    // the same again changes nothing; an upstream that speaks v1 now (an older relay) takes it back
    state.noteLink(urls[1] as string, v2([wire2.CARRIES_PUBLICATIONS]));
    expect(changes).toBe(1);
    state.noteLink(urls[1] as string, { wire: 1, reason: 'older relay', at: 2 });
    expect([facts.reads, changes]).toEqual([[READS_INLINE_PUBLICATIONS, READS_HUB_WINDOWS], 2]);
    // a restart reads what the links said last
    state.noteLink(urls[1] as string, v2([wire2.CARRIES_PUBLICATIONS]));
    const after = { reads: [] } as unknown as CycleFacts;
    followReads(after, new Wire2State(join(dir, 'wire2-state.json')), urls, () => {});
    expect(after.reads).toEqual([READS_INLINE_PUBLICATIONS, READS_HUB_WINDOWS, READS_WIRE2_PUBLICATIONS]);
  });

  it('names wire2-git-heads only where every upstream carries packed git heads too (decision 520)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'agent-reads-'));
    dirs.push(dir);
    const state = new Wire2State(join(dir, 'wire2-state.json'));
    const facts = { reads: [] } as unknown as CycleFacts;
    followReads(facts, state, urls, () => {});
    const both = [wire2.CARRIES_PUBLICATIONS, wire2.CARRIES_GIT_HEADS];
    state.noteLink(urls[0] as string, v2(both));
    // relay-b is of the build before: compact manifests, heads as git wrote them
    state.noteLink(urls[1] as string, v2([wire2.CARRIES_PUBLICATIONS]));
    expect(facts.reads).toEqual([READS_INLINE_PUBLICATIONS, READS_HUB_WINDOWS, READS_WIRE2_PUBLICATIONS]);
    state.noteLink(urls[1] as string, v2(both));
    expect(facts.reads).toEqual([
      READS_INLINE_PUBLICATIONS,
      READS_HUB_WINDOWS,
      READS_WIRE2_PUBLICATIONS,
      READS_WIRE2_GIT_HEADS,
    ]);
    // packed heads alone, without compact manifests, mean nothing
    state.noteLink(urls[0] as string, v2([wire2.CARRIES_GIT_HEADS]));
    expect(facts.reads).toEqual([READS_INLINE_PUBLICATIONS, READS_HUB_WINDOWS]);
  });

  it('names only inline manifests on hop v1 (no state) or when an upstream says nothing of it', () => {
    const facts = {} as CycleFacts;
    followReads(facts, null, urls, () => {});
    expect(facts.reads).toEqual([READS_INLINE_PUBLICATIONS, READS_HUB_WINDOWS]);
    const dir = mkdtempSync(join(tmpdir(), 'agent-reads-'));
    dirs.push(dir);
    const state = new Wire2State(join(dir, 'wire2-state.json'));
    state.noteLink(urls[0] as string, v2([wire2.CARRIES_PUBLICATIONS]));
    state.noteLink(urls[1] as string, v2());
    followReads(facts, state, urls, () => {});
    expect(facts.reads).toEqual([READS_INLINE_PUBLICATIONS, READS_HUB_WINDOWS]);
  });
});
