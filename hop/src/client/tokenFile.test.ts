import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tokenFromFile } from './tokenFile.js';

describe('tokenFromFile', () => {
  it('reads a replaced token file at the next use after checkEveryMs, tells once, and keeps the token through an empty or missing file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'hop-token-'));
    const path = join(dir, 'up.token');
    writeFileSync(path, 'first\n');
    let t = 0;
    const changes: string[] = [];
    const problems: string[] = [];
    const token = tokenFromFile(path, {
      now: () => t,
      checkEveryMs: 1000,
      onChange: (p) => changes.push(p),
      onProblem: (_p, why) => problems.push(why),
    });
    expect(token()).toBe('first');
    writeFileSync(path, 'second-token\n');
    expect(token()).toBe('first'); // not looked at before checkEveryMs
    t = 1000;
    expect(token()).toBe('second-token');
    t = 2000;
    expect(token()).toBe('second-token');
    expect(changes).toEqual([path]);
    writeFileSync(path, '');
    t = 3000;
    expect(token()).toBe('second-token');
    t = 4000;
    expect(token()).toBe('second-token');
    rmSync(path);
    t = 5000;
    expect(token()).toBe('second-token');
    expect(problems).toHaveLength(2);
    expect(problems[0]).toContain('empty');
    expect(problems[1]).toContain('ENOENT');
    writeFileSync(path, 'third');
    t = 6000;
    expect(token()).toBe('third');
    expect(changes).toHaveLength(2);
    rmSync(dir, { recursive: true, force: true });
  });
});
