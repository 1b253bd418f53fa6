import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { decodeEnrolment, exportPublicKeyPem, publicKeyFromText } from '@driftline/protocol';
import { afterAll, describe, expect, it } from 'vitest';
import { type AgentAutomergeDoc, latestCells } from '../src/core/doc/agentDoc.js';
import { tempDir } from './helpers/storeFixtures.js';
import { TestHub } from './helpers/testHub.js';

const bin = fileURLToPath(new URL('../bin/edge-agent.js', import.meta.url));
const fixtures = fileURLToPath(new URL('./fixtures/', import.meta.url));

let hub: TestHub | undefined;
afterAll(() => hub?.close());

describe('edge-agent run with sync.planOnStart (the default)', () => {
  it('plans every cell once at start, long before the first cron firing, from any working directory', {
    timeout: 120_000,
  }, async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'infra'));
    mkdirSync(join(dir, 'bin'));
    symlinkSync(join(fixtures, 'fake-terraform'), join(dir, 'bin', 'terraform'));
    writeFileSync(join(dir, 'token'), 'agent-token\n');
    const config = join(dir, 'agent.yaml');
    // Once a year: without planOnStart, nothing would be planned during this test.
    writeFileSync(
      config,
      `site: ship-7
agent: a1
dataDir: ./data
hubPublicKeyFile: ./hub.pub
upstreams: [{ url: "http://127.0.0.1:9", tokenFile: ./token }]
components:
  - name: network
    workingDir: ./infra
    environments: [prod, staging]
    schedule: "0 0 1 1 *"
sync: { intervalS: 1, jitterS: 0 }
`,
    );
    // Started from elsewhere: every relative path above resolves from the config's folder (O1 in docs/architecture.md#invariants).
    const elsewhere = tempDir('driftline-cwd-');
    const init = spawnSync(process.execPath, [bin, 'init', '--config', config, '--json'], {
      cwd: elsewhere,
      encoding: 'utf8',
    });
    expect(init.status, init.stderr).toBe(0);
    const enrolment = await decodeEnrolment(JSON.parse(init.stdout).enrollment);
    if (!enrolment.ok) throw new Error(enrolment.error);
    hub = await TestHub.start(await publicKeyFromText(enrolment.value.key));
    writeFileSync(join(dir, 'hub.pub'), await exportPublicKeyPem(hub.keys.publicKey));
    writeFileSync(config, readFileSync(config, 'utf8').replace('http://127.0.0.1:9', hub.url));

    const agent = spawn(process.execPath, [bin, 'run', '--config', config], {
      cwd: elsewhere,
      env: {
        ...process.env,
        PATH: `${join(dir, 'bin')}:${process.env.PATH}`,
        FAKE_TF_PLAN_JSON: join(fixtures, 'plans/v1.2-kitchen-sink.json'),
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    agent.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    const exited = new Promise<number | null>((r) => agent.once('exit', (c) => r(c)));
    const th = hub;
    try {
      // read again after every exchange the hub answers
      const cells = await th.served(
        'a result of both cells at the hub',
        async () => {
          await th.processArrivals();
          const keys = [...th.replicas.values()].flatMap((r) =>
            Object.keys(latestCells(r as AgentAutomergeDoc)),
          );
          return keys.includes('prod/network') && keys.includes('staging/network') ? keys : false;
        },
        exited,
      );
      expect(cells.sort()).toEqual(['prod/network', 'staging/network']);
    } finally {
      agent.kill('SIGTERM');
    }
    expect(await exited, stderr).toBe(0);
    expect(hub.rejected).toEqual([]);
    expect(existsSync(join(dir, 'data', 'agent.sqlite'))).toBe(true);
    expect(readdirSync(elsewhere)).toEqual([]);
  });
});
