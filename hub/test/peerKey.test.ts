import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateSigningKeyPair, publicKeyToText } from '@driftline/protocol';
import { describe, expect, it } from 'vitest';

const bin = fileURLToPath(new URL('../bin/hub.js', import.meta.url));
const run = (...args: string[]) => spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8' });
const newKey = async () => publicKeyToText((await generateSigningKeyPair()).publicKey);

type Listed = { peers: { name: string; state: string; publicKey: string | null }[] };

describe('hub peer add|rotate --key (decision 290)', { timeout: 120_000 }, () => {
  it("enrols a relay's key, lists it, keeps it on rotation, replaces it with --key", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hub-peer-key-'));
    const cfg = join(dir, 'hub.yaml');
    writeFileSync(
      cfg,
      `dataDir: ${dir}\nuiDir: ${join(dir, 'no-ui')}\nlisten: { host: 127.0.0.1, port: 0 }\n`,
    );
    const [k1, k2] = [await newKey(), await newKey()];

    const bad = run('peer', 'add', 'relay-1', '--sites', 'ship-7', '--key', 'ed25519:short', '-c', cfg);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('--key');
    expect(bad.stderr).toContain('relay key');

    const added = run('peer', 'add', 'relay-1', '--sites', 'ship-7', '--key', k1, '--json', '-c', cfg);
    expect(added.status).toBe(0);
    expect(JSON.parse(added.stdout)).toMatchObject({ name: 'relay-1', publicKey: k1 });
    // a relay without a key enrols only when the operator says so (issue 42): unkeyed
    const keyless = run('peer', 'add', 'relay-2', '--sites', 'ship-8', '-c', cfg);
    expect(keyless.status).toBe(2);
    expect(keyless.stderr).toContain('--key "$(relay key --config relay.yaml)"');
    expect(keyless.stderr).toContain('--no-key');
    const unkeyed = run('peer', 'add', 'relay-2', '--sites', 'ship-8', '--no-key', '-c', cfg);
    expect(unkeyed.status).toBe(0);
    expect(unkeyed.stdout).toContain('relay-2 enrolled without a key (unkeyed)');
    // so does the older form; an agent talking to the hub directly (site/agent) needs none
    expect(run('peer', '--name', 'relay-3', '--sites', 'ship-9', '-c', cfg).status).toBe(2);
    expect(run('peer', 'add', 'ship-9/a1', '--sites', 'ship-9', '-c', cfg).status).toBe(0);
    const listed = () => JSON.parse(run('peer', 'list', '--json', '-c', cfg).stdout) as Listed;
    expect(listed().peers.map((p) => [p.name, p.publicKey])).toEqual([
      ['relay-1', k1],
      ['relay-2', null],
      ['ship-9/a1', null],
    ]);
    expect(run('peer', 'list', '-c', cfg).stdout).toContain(k1);

    const kept = JSON.parse(run('peer', 'rotate', 'relay-1', '--json', '-c', cfg).stdout);
    expect(kept.publicKey).toBe(k1);
    const replaced = JSON.parse(run('peer', 'rotate', 'relay-1', '--key', k2, '--json', '-c', cfg).stdout);
    expect(replaced.publicKey).toBe(k2);
    const live = listed().peers.filter((p) => p.state === 'active');
    expect(live.map((p) => [p.name, p.publicKey])).toEqual([
      ['relay-1', k2],
      ['relay-2', null],
      ['ship-9/a1', null],
    ]);
  });
});
