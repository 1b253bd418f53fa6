import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { publicKeyFromText, verifyBytes } from '@driftline/protocol';
import { describe, expect, it } from 'vitest';
import { loadOrCreateRelayKey, relayKeyPath } from '../src/adapters/fs/relayKey.js';

const bin = fileURLToPath(new URL('../bin/relay.js', import.meta.url));
const run = (...args: string[]) => spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8' });

describe('relay key (decision 290)', () => {
  it('is made once in the data dir (0600), printed by `relay key`, and kept on the next run', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'relay-key-'));
    const cfg = join(dir, 'relay.yaml');
    writeFileSync(cfg, `name: relay-1\ndataDir: ${join(dir, 'data')}\nlisten: { port: 0 }\n`);
    const first = run('key', '--config', cfg, '--json');
    expect(first.status).toBe(0);
    const made = JSON.parse(first.stdout) as { name: string; publicKey: string; created: boolean };
    expect(made).toMatchObject({ name: 'relay-1', created: true });
    expect(made.publicKey).toMatch(/^ed25519:[A-Za-z0-9_-]{43}$/);
    expect(statSync(relayKeyPath(join(dir, 'data'))).mode & 0o777).toBe(0o600);
    const again = run('key', '--config', cfg);
    expect(again.status).toBe(0);
    expect(again.stdout.trim()).toBe(made.publicKey);

    // what it signs verifies with the printed key (the protocol's WebCrypto helpers, as the hub checks)
    const key = loadOrCreateRelayKey(join(dir, 'data'));
    expect(key.created).toBe(false);
    const data = new TextEncoder().encode('driftline');
    const pub = await publicKeyFromText(made.publicKey);
    expect(await verifyBytes(pub, key.sign(data), data)).toBe(true);
    expect(await verifyBytes(pub, key.sign(data), new TextEncoder().encode('driftlinE'))).toBe(false);
  });

  it('says what to do with a key file it cannot read', () => {
    const dir = mkdtempSync(join(tmpdir(), 'relay-key-'));
    writeFileSync(relayKeyPath(dir), 'not a key');
    expect(() => loadOrCreateRelayKey(dir)).toThrow(/relay key .*`hub peer rotate NAME --key/);
    expect(readFileSync(relayKeyPath(dir), 'utf8')).toBe('not a key');
  });
});
