/**
 * docs/operations.md's back-up and restore blocks, run as written (the shell blocks after
 * `<!-- ops:backup -->` and `<!-- ops:restore -->`) against a running hub process: what was there at the
 * backup is there after the restore, with the same hub key; what came after is not.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../src/topology/ports.js';
import { ROOT } from '../src/topology/programs.js';
import { until } from './support.js';

/** The shell block after the line `<!-- ops:NAME -->` in docs/operations.md. */
function opsBlock(name: string): string {
  const lines = readFileSync(join(ROOT, 'docs', 'operations.md'), 'utf8').split('\n');
  const at = lines.findIndex((l) => l.trim() === `<!-- ops:${name} -->`);
  if (at < 0 || !lines[at + 1]?.startsWith('```'))
    throw new Error(`docs/operations.md: no ops:${name} block`);
  const end = lines.findIndex((l, i) => i > at + 1 && l.trim() === '```');
  return lines.slice(at + 2, end).join('\n');
}

const env = (extra: Record<string, string> = {}) => ({
  ...process.env,
  PATH: `${join(ROOT, 'node_modules', '.bin')}:${process.env.PATH ?? ''}`,
  LOG_LEVEL: 'silent',
  ...extra,
});

let hub: ChildProcess | null = null;
const stopHub = async () => {
  if (!hub || hub.exitCode !== null) return;
  const done = new Promise((r) => hub?.once('exit', r));
  hub.kill('SIGTERM');
  await done;
};
afterAll(stopHub);

describe('docs/operations.md: back up and restore the hub', () => {
  it('restores what the hub held at the backup, taken while it ran, with its key', {
    timeout: 180_000,
  }, async () => {
    const root = mkdtempSync(join(tmpdir(), 'driftline-backup-'));
    const hq = join(root, 'hq');
    mkdirSync(hq);
    const port = await freePort();
    writeFileSync(join(hq, 'hub.yaml'), `dataDir: ./hub-data\nlisten: { port: ${port} }\n`);
    writeFileSync(join(hq, 'f.bin'), 'a file for ship-7');
    const sh = (script: string, extra: Record<string, string> = {}) =>
      spawnSync('bash', ['-e', '-c', script], { cwd: hq, encoding: 'utf8', env: env(extra) });
    const hubCli = (args: string) => sh(`hub ${args} --config hub.yaml`);
    for (const step of [
      'init',
      'user add alice --role admin --write-token alice.token',
      'peer add relay-1 --sites ship-7 --no-key',
      'publication publish --site ship-7 --name f f.bin',
    ]) {
      const r = hubCli(step);
      expect(r.status, `hub ${step}: ${r.stderr}`).toBe(0);
    }
    const key = hubCli('key').stdout.trim();
    hub = spawn('hub', ['run', '--config', 'hub.yaml'], { cwd: hq, env: env(), stdio: 'ignore' });
    const health = `http://127.0.0.1:${port}/v1/health`;
    await until('the hub answers', async () => (await fetch(health).catch(() => null))?.ok, 60_000);

    const backup = join(root, 'backup');
    const b = sh(opsBlock('backup'), { BACKUP: backup });
    expect(b.status, b.stderr).toBe(0);
    expect(b.stdout).toMatch(/^backed up to .*: hub\.db bundles\.db drift\.db hub-key\.pem csrf-key/m);
    expect(statSync(backup).mode & 0o777).toBe(0o700);
    expect(hubCli('user add bob --role viewer').status).toBe(0); // after the backup: not restored
    await stopHub();

    const r = sh(opsBlock('restore'), { BACKUP: backup });
    expect(r.status, r.stderr).toBe(0);
    expect(hubCli('key').stdout.trim()).toBe(key);
    const users = hubCli('user list --json').stdout;
    expect(users).toContain('"alice"');
    expect(users).not.toContain('"bob"');
    expect(hubCli('peer list --json').stdout).toContain('"relay-1"');
    expect(JSON.parse(hubCli('publication list --json').stdout).publications).toHaveLength(1);

    hub = spawn('hub', ['run', '--config', 'hub.yaml'], { cwd: hq, env: env(), stdio: 'ignore' });
    await until('the restored hub answers', async () => (await fetch(health).catch(() => null))?.ok, 60_000);
    const token = readFileSync(join(hq, 'alice.token'), 'utf8').trim();
    const matrix = await fetch(`http://127.0.0.1:${port}/api/matrix`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(matrix.status).toBe(200);
  });
});
