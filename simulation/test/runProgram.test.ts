/**
 * `runProgram`, which every set-up runs the CLIs through: a run that never ends is killed after its
 * bound and named in the error (the Compose set-up step once waited on one in silence for 800 s).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { runProgram } from '../src/topology/programs.js';

const dir = mkdtempSync(join(tmpdir(), 'driftline-runprogram-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('runProgram', () => {
  it('resolves with what a program printed, and kills one that does not exit within its bound', async () => {
    const config = join(dir, 'hub.yaml');
    writeFileSync(config, stringify({ listen: { host: '127.0.0.1', port: 0 }, dataDir: './data' }));
    await runProgram('hub', ['init', '--config', config]);
    expect((await runProgram('hub', ['key', '--config', config])).trim()).toMatch(
      /^ed25519:[A-Za-z0-9_-]{40,}$/,
    );
    // The daemon never exits by itself: a stand-in for a verb that hangs.
    const t = Date.now();
    const err = await runProgram('hub', ['run', '--config', config], { timeoutMs: 3000 }).catch(
      (e: Error) => e,
    );
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toMatch(/^hub run --config .*: no exit within 3 s, killed; it printed: /);
    expect(Date.now() - t).toBeGreaterThanOrEqual(3000);
  }, 60_000);
});
