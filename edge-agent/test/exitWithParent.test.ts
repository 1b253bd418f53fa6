import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateSigningKeyPair, publicKeyToText } from '@driftline/protocol';
import { expect, it } from 'vitest';
import { tempDir } from './helpers/storeFixtures.js';

const bin = fileURLToPath(new URL('../bin/edge-agent.js', import.meta.url));

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/**
 * A supervisor killed outright (SIGKILL) leaves no agent behind when it started it with
 * `DRIFTLINE_EXIT_WITH_PARENT=1` (docs/operations.md, "Under a supervisor of your own"), as the demo
 * does. The agent's stderr was the dead supervisor's pipe: its last log lines meet a closed pipe, and
 * it stops all the same (a 'stopping' line that threw once left it running for good).
 */
it('an agent started with DRIFTLINE_EXIT_WITH_PARENT=1 stops when its supervisor, its stderr reader, is SIGKILLed', {
  timeout: 90_000,
}, async () => {
  const dir = tempDir('agent-orphan-');
  mkdirSync(join(dir, 'infra'));
  writeFileSync(
    join(dir, 'hub.pub'),
    `${await publicKeyToText((await generateSigningKeyPair()).publicKey)}\n`,
  );
  writeFileSync(join(dir, 'token'), 'x\n');
  writeFileSync(
    join(dir, 'agent.yaml'),
    `site: ship-7
agent: a1
dataDir: ./data
hubPublicKeyFile: ./hub.pub
upstreams: [{ url: "http://127.0.0.1:9", tokenFile: ./token }]
components:
  - name: network
    workingDir: ./infra
    environments: [prod]
    schedule: "0 0 1 1 *"
sync: { planOnStart: false, intervalS: 1 }
`,
  );
  expect(spawnSync(process.execPath, [bin, 'init', '--config', 'agent.yaml'], { cwd: dir }).status).toBe(0);
  // the supervisor: starts the agent with its stderr on a pipe it reads, says the agent's pid once it
  // started, then waits to be killed
  const supervisor = spawn(
    process.execPath,
    [
      '-e',
      `const { spawn } = require('node:child_process');
       const a = spawn(process.execPath, [${JSON.stringify(bin)}, 'run', '--config', 'agent.yaml'], {
         cwd: ${JSON.stringify(dir)},
         env: { ...process.env, LOG_LEVEL: 'info', DRIFTLINE_EXIT_WITH_PARENT: '1' },
         stdio: ['ignore', 'ignore', 'pipe'],
       });
       a.stderr.on('data', (d) => { if (/agent started/.test(String(d))) console.log(a.pid); });
       setInterval(() => {}, 1000);`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const agentPid = await new Promise<number>((resolve, reject) => {
    supervisor.stdout.once('data', (d: Buffer) => resolve(Number(String(d).trim())));
    supervisor.once('exit', (c) => reject(new Error(`the supervisor exited ${c}`)));
  });
  expect(alive(agentPid)).toBe(true);
  supervisor.kill('SIGKILL');
  // bounded: 300 turns of 100 ms; the agent looks every 2 s and stops within its 30 s grace
  for (let i = 0; i < 300 && alive(agentPid); i++) await new Promise((r) => setTimeout(r, 100));
  const orphan = alive(agentPid);
  if (orphan) process.kill(agentPid, 'SIGKILL');
  expect(orphan).toBe(false);
});
