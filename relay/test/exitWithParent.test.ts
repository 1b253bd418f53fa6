import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const bin = fileURLToPath(new URL('../bin/relay.js', import.meta.url));

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/**
 * A supervisor killed outright (SIGKILL: no handler runs) leaves no relay behind when it started it with
 * `DRIFTLINE_EXIT_WITH_PARENT=1` (docs/operations.md, "Under a supervisor of your own"), as the demo and
 * the simulator do.
 */
it('a relay started with DRIFTLINE_EXIT_WITH_PARENT=1 stops when its supervisor is SIGKILLed', {
  timeout: 60_000,
}, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'relay-orphan-'));
  writeFileSync(join(dir, 'up.token'), 'tok\n');
  writeFileSync(
    join(dir, 'relay.yaml'),
    'name: relay-1\ndataDir: ./data\nlisten: { host: 127.0.0.1, port: 0 }\nsites: [ship-1]\nupstreams: [{ url: "http://127.0.0.1:9", tokenFile: ./up.token }]\n',
  );
  // the supervisor: starts the relay, says its pid once it listens, then waits to be killed
  const supervisor = spawn(
    process.execPath,
    [
      '-e',
      `const { spawn } = require('node:child_process');
       const r = spawn(process.execPath, [${JSON.stringify(bin)}, 'run', '--config', 'relay.yaml'], {
         cwd: ${JSON.stringify(dir)},
         env: { ...process.env, LOG_LEVEL: 'info', DRIFTLINE_EXIT_WITH_PARENT: '1' },
         stdio: ['ignore', 'ignore', 'pipe'],
       });
       r.stderr.on('data', (d) => { if (/relay listening/.test(String(d))) console.log(r.pid); });
       setInterval(() => {}, 1000);`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const relayPid = await new Promise<number>((resolve, reject) => {
    supervisor.stdout.once('data', (d: Buffer) => resolve(Number(String(d).trim())));
    supervisor.once('exit', (c) => reject(new Error(`the supervisor exited ${c}`)));
  });
  expect(alive(relayPid)).toBe(true);
  supervisor.kill('SIGKILL');
  // bounded: 100 turns of 100 ms; the relay looks every 2 s
  for (let i = 0; i < 100 && alive(relayPid); i++) await new Promise((r) => setTimeout(r, 100));
  const orphan = alive(relayPid);
  if (orphan) process.kill(relayPid, 'SIGKILL');
  expect(orphan).toBe(false);
});
