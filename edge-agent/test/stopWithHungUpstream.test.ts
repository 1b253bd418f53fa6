import { spawn, spawnSync } from 'node:child_process';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { idleAgentDir } from './helpers/idleAgentDir.js';

const bin = fileURLToPath(new URL('../bin/edge-agent.js', import.meta.url));

/**
 * SIGTERM ends the agent's exchanges in progress (they go again at the next start) instead of waiting
 * for them: an exchange with an upstream that takes the request and never answers (a hung relay, or one
 * minutes away) held the stop until the 30 s grace cut it, with no `agent stopped` and nothing closed.
 */
it('stops at once on SIGTERM while an upstream holds its exchange unanswered, and says it stopped', {
  timeout: 90_000,
}, async () => {
  const held: ServerResponse[] = [];
  const hung = createServer((_req, res) => {
    held.push(res);
  });
  await new Promise<void>((r) => hung.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(hung.address() as AddressInfo).port}`;
  // the upstream's 'request' event: the agent's first exchange is in, and held
  const firstHeld = new Promise<void>((r) => hung.once('request', () => r()));
  try {
    const dir = await idleAgentDir(bin, url, 'agent-hung-');
    const agent = spawn(process.execPath, [bin, 'run', '--config', 'agent.yaml'], {
      cwd: dir,
      env: { ...process.env, LOG_LEVEL: 'info' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    agent.stderr.on('data', (d: Buffer) => {
      stderr += d;
    });
    const exited = new Promise<number | null>((r) => agent.once('exit', (code) => r(code)));
    // until the upstream holds one of its requests (an agent that exits first fails here, not at the timeout)
    await Promise.race([
      firstHeld,
      exited.then((code) => {
        throw new Error(`the agent exited (${code}) before its upstream held a request:\n${stderr}`);
      }),
    ]);
    expect(held.length).toBeGreaterThan(0);
    agent.kill('SIGTERM');
    expect(await exited).toBe(0);
    // logged only when the stop finished by itself, not when the grace cut it
    expect(stderr).toMatch(/"msg":"agent stopped"/);
    // the agent's own cut is not the upstream's failure: status does not say it is down for it
    const status = spawnSync(process.execPath, [bin, 'status', '--config', 'agent.yaml'], {
      cwd: dir,
      encoding: 'utf8',
    });
    expect(status.stdout).toContain('agent          ship-7/a1');
    expect(status.stdout).not.toMatch(/aborted|DOWN/);
  } finally {
    for (const r of held) r.destroy();
    hung.closeAllConnections();
    await new Promise<void>((r) => hung.close(() => r()));
  }
});
