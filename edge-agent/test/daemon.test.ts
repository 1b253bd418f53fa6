import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { decodeEnrolment, exportPublicKeyPem, publicKeyFromText } from '@driftline/protocol';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from './helpers/storeFixtures.js';
import { TestHub } from './helpers/testHub.js';

const bin = fileURLToPath(new URL('../bin/edge-agent.js', import.meta.url));
const fixtures = fileURLToPath(new URL('./fixtures/', import.meta.url));
const cli = (args: string[], env: Record<string, string> = {}) =>
  spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', env: { ...process.env, ...env } });

let hub: TestHub | undefined;
afterAll(() => hub?.close());

describe('edge-agent daemon, end to end against a hop server', () => {
  it('inits, runs plans on schedule, pushes, gets acked, reports status and stops cleanly on SIGTERM', {
    timeout: 120_000,
  }, async () => {
    const dir = tempDir();
    const work = join(dir, 'infra');
    const tools = join(dir, 'bin');
    mkdirSync(work);
    mkdirSync(tools);
    symlinkSync(join(fixtures, 'fake-terraform'), join(tools, 'terraform'));
    writeFileSync(join(dir, 'token'), 'agent-token\n');
    const config = join(dir, 'agent.yaml');
    const yaml = (hubUrl: string) => `
site: ship-7
agent: a1
dataDir: ./data
hubPublicKeyFile: ./hub.pub
upstreams:
  - url: ${hubUrl}
    tokenFile: ./token
components:
  - name: network
    workingDir: ./infra
    environments: [prod, staging]
    schedule: "*/2 * * * * *"
sync:
  intervalS: 1
  jitterS: 0
`;
    writeFileSync(config, yaml('http://127.0.0.1:9'));

    // init works before the hub key exists, prints the enrolment line, and keeps an existing key.
    const init = cli(['init', '--config', config]);
    expect(init.status).toBe(0);
    const enrol = init.stdout.trim();
    expect(enrol).toMatch(/^hub enroll --config hub\.yaml dle1\.[A-Za-z0-9_-]+\.[0-9a-f]{8}$/);
    const enrolment = await decodeEnrolment(enrol.split(' ').at(-1) as string);
    if (!enrolment.ok) throw new Error(enrolment.error);
    expect(enrolment.value).toMatchObject({ site: 'ship-7', agent: 'a1' });
    expect(cli(['init', '--config', config]).stdout.trim()).toBe(enrol);

    hub = await TestHub.start(await publicKeyFromText(enrolment.value.key));
    writeFileSync(join(dir, 'hub.pub'), await exportPublicKeyPem(hub.keys.publicKey));
    writeFileSync(config, yaml(hub.url));

    const env = {
      ...process.env,
      PATH: `${tools}:${process.env.PATH}`,
      FAKE_TF_PLAN_JSON: join(fixtures, 'plans/v1.2-kitchen-sink.json'),
      LOG_LEVEL: 'warn',
    };
    const agent = spawn(process.execPath, [bin, 'run', '--config', config], {
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    agent.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    const exited = new Promise<number | null>((r) => agent.once('exit', (c) => r(c)));
    const th = hub;
    try {
      // each is read again after every exchange the hub answers
      await th.served(
        'the hub to receive results of both cells',
        async () => {
          await th.processArrivals();
          const docs = [...th.replicas.keys()];
          return docs.length > 0 && th.backend.blobData.size > 0;
        },
        exited,
      );
      await th.served(
        'the agent to get every result acknowledged',
        () => {
          const s = cli(['status', '--config', config, '--json']);
          if (s.status !== 0) return false;
          const st = JSON.parse(s.stdout);
          return st.lastAckAt !== null && st.lastPush?.ok === true;
        },
        exited,
      );
    } finally {
      agent.kill('SIGTERM');
    }
    const code = await exited;
    expect(code, stderr).toBe(0);
    expect(hub.rejected).toEqual([]);
    const status = cli(['status', '--config', config]);
    expect(status.stdout).toContain('agent          ship-7/a1');
    expect(status.stdout).toMatch(/last push\s+ok/);
    // No windows declared: status says so, and that the agent syncs by its interval (decision 450).
    expect(status.stdout).toContain(
      "contact plan   none declared (sync.contactWindows, or the hub's contactPlans.sites)",
    );
  });

  it('exits 2 with a readable list when the config is wrong', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'bad.yaml'), 'site: Not A Site\nagent: a1\n');
    const r = cli(['run', '--config', join(dir, 'bad.yaml')]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/site: /);
    expect(r.stderr).toMatch(/problem\(s\)/);
  });

  it('says how to make a key when run before init', () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'infra'));
    writeFileSync(join(dir, 'hub.pub'), 'ed25519:lrF3pwuGnJ6mZQsKmoWVHO3zn1Yi683wSjDanFjASqs');
    writeFileSync(join(dir, 'token'), 't');
    writeFileSync(
      join(dir, 'a.yaml'),
      'site: s\nagent: a\ndataDir: ./data\nhubPublicKeyFile: ./hub.pub\nupstreams: [{url: "http://127.0.0.1:9", tokenFile: ./token}]\ncomponents: [{name: c, workingDir: ./infra, environments: [e]}]\n',
    );
    const r = cli(['run', '--config', join(dir, 'a.yaml')]);
    expect(r.status).toBe(2); // a missing key is a configuration problem (issue 42)
    expect(r.stderr).toContain('edge-agent init');
  });
});
