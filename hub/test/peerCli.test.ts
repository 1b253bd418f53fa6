import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createHub } from '../src/app.js';
import { parseConfig } from '../src/config.js';

const bin = fileURLToPath(new URL('../bin/hub.js', import.meta.url));
const run = (...args: string[]) => spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8' });

type Listed = {
  peers: { name: string; token: string; sites: string[]; state: string; lastUsedAt: string | null }[];
};

describe('hub peer list|add|revoke|rotate|sites', () => {
  it('manages relay tokens at a real hub: rotation with grace, revocation, sites, all audited', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hub-peer-'));
    const cfg = join(dir, 'hub.yaml');
    writeFileSync(
      cfg,
      `dataDir: ${dir}\nuiDir: ${join(dir, 'no-ui')}\nlisten: { host: 127.0.0.1, port: 0 }\n`,
    );
    const parsed = parseConfig(
      { dataDir: dir, uiDir: join(dir, 'no-ui'), listen: { host: '127.0.0.1', port: 0 } },
      dir,
      {},
    );
    if (!parsed.ok) throw new Error(parsed.errors.join('; '));
    const hub = await createHub(parsed.config);
    try {
      const { hop } = await hub.listen();
      const asPeer = (token: string) =>
        fetch(`${hop}/v1/bundles?for=ship-7`, { headers: { authorization: `Bearer ${token}` } }).then(
          (r) => r.status,
        );

      // the older form still issues a token; its last line is the token (README: `| tail -n 1`)
      const old = run('peer', '--name', 'relay-1', '--sites', 'ship-7', '--no-key', '-c', cfg);
      expect(old.status).toBe(0);
      const first = old.stdout.trim().split('\n').at(-1) as string;
      expect(await asPeer(first)).toBe(200);
      // a second `add` of a working name is refused and says what to do instead
      const again = run('peer', 'add', 'relay-1', '--sites', 'ship-7', '--no-key', '-c', cfg);
      expect(again.status).toBe(1);
      expect(again.stderr).toContain('hub peer rotate relay-1');
      expect(run('peer', 'add', 'relay-2', '--sites', 'ship 9', '-c', cfg).status).toBe(2);

      // rotate with a grace period: both tokens work until it ends
      const rotated = run('peer', 'rotate', 'relay-1', '--grace', '1h', '--json', '-c', cfg);
      expect(rotated.status).toBe(0);
      const second = JSON.parse(rotated.stdout) as { token: string; sites: string[]; oldTokenUntil: string };
      expect(second.sites).toEqual(['ship-7']);
      expect(Date.parse(second.oldTokenUntil) - Date.now()).toBeGreaterThan(59 * 60_000);
      expect(await asPeer(first)).toBe(200);
      expect(await asPeer(second.token)).toBe(200);
      let list = JSON.parse(run('peer', 'list', '--json', '-c', cfg).stdout) as Listed;
      expect(list.peers.map((p) => [p.name, p.state])).toEqual([
        ['relay-1', 'expiring'],
        ['relay-1', 'active'],
      ]);
      expect(list.peers.every((p) => p.lastUsedAt !== null)).toBe(true);

      // rotate with the default grace (0): the token before stops at once
      const third = JSON.parse(run('peer', 'rotate', 'relay-1', '--json', '-c', cfg).stdout) as {
        token: string;
      };
      expect(await asPeer(first)).toBe(401);
      expect(await asPeer(second.token)).toBe(401);
      expect(await asPeer(third.token)).toBe(200);

      // the sites are the hub's to set
      expect(run('peer', 'sites', 'relay-1', '--sites', 'ship-7,ship-8', '-c', cfg).status).toBe(0);
      list = JSON.parse(run('peer', 'list', '--json', '-c', cfg).stdout) as Listed;
      expect(list.peers.find((p) => p.state === 'active')?.sites).toEqual(['ship-7', 'ship-8']);

      expect(run('peer', 'revoke', 'relay-1', '-c', cfg).status).toBe(0);
      expect(await asPeer(third.token)).toBe(401);
      const none = run('peer', 'revoke', 'relay-1', '-c', cfg);
      expect(none.status).toBe(1);
      expect(none.stderr).toContain('no working token');
      const human = run('peer', 'list', '-c', cfg).stdout;
      // KEY: the relay's enrolled key, '-' for a relay without one (decision 290)
      expect(human).toContain('NAME\tTOKEN\tSITES\tKEY\tCREATED\tLAST USED\tSTATE');
      expect(human).toContain('\tship-7\t-\t');
      expect(human).toContain('revoked');

      const audit = await hub.store.listAudit({ limit: 10 });
      expect(audit.map((a) => [a.action, a.target, a.actor])).toEqual([
        ['peer.revoke', 'relay-1', 'cli'],
        ['peer.sites', 'relay-1', 'cli'],
        ['peer.rotate', 'relay-1', 'cli'],
        ['peer.rotate', 'relay-1', 'cli'],
        ['peer.add', 'relay-1', 'cli'],
      ]);
      for (const t of [first, second.token, third.token]) expect(JSON.stringify(audit)).not.toContain(t);
    } finally {
      await hub.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it('has --help with an example on every verb', () => {
    for (const v of [[], ['list'], ['add'], ['revoke'], ['rotate'], ['sites']]) {
      const r = run('peer', ...v, '--help');
      expect(r.status).toBe(0);
      expect(r.stdout).toContain('Example:\n  hub peer');
    }
  }, 120_000); // six process starts: beside other tests on two cores, past the default 30 s
});
