import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Wire2State } from './wire2State.js';

const file = () => join(mkdtempSync(join(tmpdir(), 'wire2-state-')), 'wire2-state.json');

describe('the agent’s hop v2 state', () => {
  it('never hands out a sequence twice, across a restart that lost what it used of its block', () => {
    const f = file();
    const a = new Wire2State(f);
    const used = Array.from({ length: 70 }, () => a.seq());
    expect(used[0]).toBe(1);
    expect(new Set(used).size).toBe(70);
    // a crash: whatever of the reserved block was used is past; the next process starts after the block
    const b = new Wire2State(f);
    expect(b.seq()).toBeGreaterThan(Math.max(...used));
  });

  it('names what a push carried by its sequence and tip, and nothing for another tip or a forgotten push', () => {
    const f = file();
    const s = new Wire2State(f);
    const tip = Uint8Array.of(1, 2, 3, 4, 5, 6, 7, 8);
    s.notePush(5, tip, { doc: 'ship-7/a1/epoch-1', heads: ['ab'] });
    expect(s.acked(5, tip)).toEqual({ doc: 'ship-7/a1/epoch-1', heads: ['ab'] });
    expect(s.acked(5, Uint8Array.of(9, 2, 3, 4, 5, 6, 7, 8))).toBeNull(); // another agent's push 5
    expect(s.acked(6, tip)).toBeNull();
    expect(new Wire2State(f).acked(5, tip)).toEqual({ doc: 'ship-7/a1/epoch-1', heads: ['ab'] });
    for (let i = 0; i < 64; i++) s.notePush(100 + i, tip, { doc: 'd', heads: [] });
    expect(s.acked(5, tip)).toBeNull(); // the oldest go first: its ack would come for a later push
  });

  it('starts afresh from an unreadable file', () => {
    const f = file();
    writeFileSync(f, '{not json');
    expect(new Wire2State(f).seq()).toBe(1);
  });
});
