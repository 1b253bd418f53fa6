import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { lockRace } from '@driftline/hop/testing';
import { describe, expect, it } from 'vitest';

const bin = fileURLToPath(new URL('../bin/hub.js', import.meta.url));

describe('hub run on SQLite (as processes)', { timeout: 120_000 }, () => {
  it('runs one hub per store: a second exits 2 naming the holder; a restart after SIGKILL is not blocked', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hub-lock-'));
    const cfg = join(dir, 'hub.yaml');
    writeFileSync(cfg, 'dataDir: ./data\nlisten: { host: 127.0.0.1, port: 0 }\n');
    expect(spawnSync(process.execPath, [bin, 'init', '--config', cfg]).status).toBe(0);
    const data = join(dir, 'data');
    // 'no users yet' is logged once the hub serves, just before it installs its signal handlers
    const r = await lockRace([process.execPath, bin, 'run', '--config', cfg], join(data, 'hub.lock'), {
      readyLine: /no users yet/,
    });
    expect(r.second.status).toBe(2);
    expect(r.second.stderr).toMatch(
      new RegExp(`^hub: ${data} is in use by PID ${r.firstPid} \\(hub run, since [^\\n]*\\n$`),
    );
    expect([r.restartTook, r.restartExit]).toEqual([true, 0]);
  });
});
