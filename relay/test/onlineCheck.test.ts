import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { startTerminal, tmp } from './helpers.js';

const bin = fileURLToPath(new URL('../bin/relay.js', import.meta.url));
/** Runs the relay CLI without blocking this process, whose upstream servers must answer meanwhile. */
const run = (args: string[]) =>
  new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
    const p = spawn(process.execPath, [bin, ...args], { env: { ...process.env, LOG_LEVEL: 'warn' } });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d) => (stdout += d));
    p.stderr.on('data', (d) => (stderr += d));
    p.on('close', (status) => resolve({ status, stdout, stderr }));
  });

/** A port nothing listens on: bound, then closed. */
const closedPort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });

describe('relay config check --online', { timeout: 60_000 }, () => {
  it('says per upstream whether it answers and takes the token: exit 2 when one refuses it, 1 when one does not answer', async () => {
    const good = await startTerminal('good-token');
    good.backend.addToken('scoped-token', { name: 'relay-1', sites: ['ship-7'] });
    const dead = await closedPort();
    const dir = tmp('relay-online-');
    writeFileSync(join(dir, 'good.token'), 'scoped-token\n');
    writeFileSync(join(dir, 'bad.token'), 'not-a-token\n');
    const config = join(dir, 'relay.yaml');
    const yaml = (ups: string) =>
      `name: relay-1\ndataDir: ./data\nlisten: { host: 127.0.0.1, port: 0 }\nsites: [ship-7, ship-8]\nupstreams:\n${ups}`;
    const up = (name: string, url: string, file: string) =>
      `  - { name: ${name}, url: "${url}", tokenFile: ./${file} }\n`;
    try {
      writeFileSync(
        config,
        yaml(
          up('hub', good.url, 'good.token') +
            up('wrong-token', good.url, 'bad.token') +
            up('down', `http://127.0.0.1:${dead}`, 'good.token'),
        ),
      );
      const r = await run(['config', 'check', '--config', config, '--online', '--timeout', '5']);
      // a refused token is a credential problem: 2, as the agent's check says it (issue 42)
      expect(r.status).toBe(2);
      // the verdict comes after the upstreams were asked: never "OK" above a refused token (issue 58)
      expect(r.stdout).toMatch(/^\S+relay\.yaml: not usable — relay relay-1/);
      expect(r.stdout).not.toMatch(/: OK — relay/);
      expect(r.stderr).toContain('upstreams[1].tokenFile: wrong-token');
      expect(r.stdout).toContain(
        `upstream hub (${good.url}): OK, takes the token as peer 'relay-1', acting for ship-7`,
      );
      expect(r.stdout).toContain('the token does not act for ship-8 of relay.yaml sites');
      expect(r.stdout).toContain('hub peer sites relay-1 --sites ship-7,ship-8');
      expect(r.stderr).toMatch(/upstream wrong-token \(.*\): refuses the token .*hub peer rotate relay-1/);
      expect(r.stderr).toMatch(new RegExp(`upstream down \\(http://127.0.0.1:${dead}\\): does not answer`));

      writeFileSync(config, yaml(up('hub', good.url, 'good.token')));
      const ok = await run(['config', 'check', '--config', config, '--online', '--json']);
      expect(ok.status, ok.stderr).toBe(0);
      expect(JSON.parse(ok.stdout).online).toMatchObject([
        { name: 'hub', ok: true, peer: { name: 'relay-1', sites: ['ship-7'] } },
      ]);
      // without --online nothing is asked: the same file with a dead upstream passes
      writeFileSync(config, yaml(up('down', `http://127.0.0.1:${dead}`, 'good.token')));
      expect((await run(['config', 'check', '--config', config])).status).toBe(0);
      // with --online, an upstream that only does not answer is a failure, 1
      const down = await run(['config', 'check', '--config', config, '--online', '--timeout', '5']);
      expect(down.status, down.stderr).toBe(1);
    } finally {
      await good.hop.close();
    }
  });

  it('has --online in its --help', async () => {
    const r = await run(['config', 'check', '--help']);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('--online');
    expect(r.stdout).toContain('relay config check --config relay.yaml --online');
  });
});
