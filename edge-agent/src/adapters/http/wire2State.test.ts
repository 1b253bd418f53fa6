import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
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
    s.flush(); // the batch's end
    expect(new Wire2State(f).acked(5, tip)).toEqual({ doc: 'ship-7/a1/epoch-1', heads: ['ab'] });
    for (let i = 0; i < 64; i++) s.notePush(100 + i, tip, { doc: 'd', heads: [] });
    expect(s.acked(5, tip)).toBeNull(); // the oldest go first: its ack would come for a later push
  });

  it('writes the pushes of a batch once, at flush, and a sequence block before its first number', () => {
    const f = file();
    const s = new Wire2State(f);
    const tip = Uint8Array.of(1, 2, 3, 4, 5, 6, 7, 8);
    const first = s.seq(); // reserves a block: written before the number is handed out
    expect((JSON.parse(readFileSync(f, 'utf8')) as { next: number }).next).toBeGreaterThan(first);
    const before = readFileSync(f, 'utf8');
    for (let i = 0; i < 3; i++) s.notePush(first + i, tip, { doc: 'd', heads: [`h${i}`] });
    expect(readFileSync(f, 'utf8')).toBe(before); // noted in memory: no write a push
    expect(s.acked(first + 2, tip)).toEqual({ doc: 'd', heads: ['h2'] });
    s.flush();
    const after = readFileSync(f, 'utf8');
    expect(new Wire2State(f).acked(first, tip)).toEqual({ doc: 'd', heads: ['h0'] });
    s.flush();
    expect(readFileSync(f, 'utf8')).toBe(after); // nothing new: nothing written
    // a block reserved while pushes wait writes them with it
    for (let i = 0; i < 63; i++) s.seq();
    s.notePush(999, tip, { doc: 'd', heads: ['late'] });
    s.seq();
    expect(new Wire2State(f).acked(999, tip)).toEqual({ doc: 'd', heads: ['late'] });
  });

  it('starts afresh from an unreadable file', () => {
    const f = file();
    writeFileSync(f, '{not json');
    expect(new Wire2State(f).seq()).toBe(1);
  });
});
