import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateSigningKeyPair, publicKeyToText } from '@driftline/protocol';
import { describe, expect, it } from 'vitest';
import { SqliteHubStore } from '../src/adapters/sqlite/SqliteHubStore.js';

const bin = fileURLToPath(new URL('../bin/hub.js', import.meta.url));
const run = (...args: string[]) => spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8' });

describe('hub CLI', () => {
  it('prints help with an example and exits 0', () => {
    const r = run('--help');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('Usage: hub');
    expect(r.stdout).toContain('Example');
  });

  it('exits 2 on a usage error and says what was wrong', () => {
    const r = run('--no-such-flag');
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("unknown option '--no-such-flag'");
  });

  it('names a mistyped option before the required one it stands for (issue 58)', () => {
    const r = run('revoke', '--stie', 'ship-7', '--agent', 'a1');
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("unknown option '--stie'");
    const missing = run('revoke', '--agent', 'a1');
    expect(missing.status).toBe(2);
    expect(missing.stderr).toContain("required option '--site <site>' not specified");
  });

  it('adds a user with a token shown once, lists and revokes it, and audits both', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hub-cli-'));
    try {
      const cfg = join(dir, 'hub.yaml');
      writeFileSync(cfg, `dataDir: ${dir}\n`);
      const added = run('user', 'add', 'ada', '--role', 'operator,publisher', '--json', '-c', cfg);
      expect(added.status).toBe(0);
      const out = JSON.parse(added.stdout) as { name: string; roles: string[]; token: string };
      expect(out).toMatchObject({ name: 'ada', roles: ['operator', 'publisher'] });
      expect(out.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(run('user', 'add', 'ada', '--role', 'viewer', '-c', cfg).status).toBe(1);
      expect(run('user', 'add', 'bob', '--role', 'root', '-c', cfg).status).toBe(2);
      const sso = JSON.parse(
        run('user', 'add', 'sam@example.org', '--role', 'viewer', '--sso', '--json', '-c', cfg).stdout,
      );
      expect(sso.token).toBeNull();
      expect(run('user', 'revoke', 'ada', '-c', cfg).status).toBe(0);
      const list = JSON.parse(run('user', 'list', '--json', '-c', cfg).stdout) as {
        users: { name: string; signIn: string; revokedAt: string | null }[];
      };
      expect(list.users.map((u) => [u.name, u.signIn, u.revokedAt !== null])).toEqual([
        ['ada', 'token', true],
        ['sam@example.org', 'sso', false],
      ]);
      const store = new SqliteHubStore(join(dir, 'hub.db'));
      const audit = await store.listAudit({ limit: 10 });
      await store.close();
      expect(audit.map((a) => [a.action, a.target, a.actor])).toEqual([
        ['user.revoke', 'ada', 'cli'],
        ['user.add', 'sam@example.org', 'cli'],
        ['user.add', 'ada', 'cli'],
      ]);
      expect(JSON.stringify(audit)).not.toContain(out.token);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it('audits peers, enrolments and revocations made from the command line', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hub-cli-'));
    try {
      const cfg = join(dir, 'hub.yaml');
      writeFileSync(cfg, `dataDir: ${dir}\n`);
      const key = await publicKeyToText((await generateSigningKeyPair()).publicKey);
      expect(run('peer', '--name', 'ground-1', '--sites', 'ship-7', '--no-key', '-c', cfg).status).toBe(0);
      expect(run('enroll', '--site', 'ship-7', '--agent', 'a1', '--key', key, '-c', cfg).status).toBe(0);
      expect(run('revoke', '--site', 'ship-7', '--agent', 'a1', '-c', cfg).status).toBe(0);
      const store = new SqliteHubStore(join(dir, 'hub.db'));
      const audit = await store.listAudit({ limit: 10 });
      await store.close();
      expect(audit.map((a) => [a.action, a.target, a.actor, a.outcome])).toEqual([
        ['agent.revoke', 'ship-7/a1', 'cli', 'ok'],
        ['agent.enroll', 'ship-7/a1', 'cli', 'ok'],
        ['peer.add', 'ground-1', 'cli', 'ok'],
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
