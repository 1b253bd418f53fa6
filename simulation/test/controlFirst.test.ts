import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { type LinkHandle, startLink } from '../src/link.js';
import { freePort, waitForHttp } from '../src/topology/ports.js';
import { BINS, commandFor, FAKE_TERRAFORM_DIR, runProgram } from '../src/topology/programs.js';
import { ProcessGroup, setUpHub, until } from './support.js';

/**
 * Control first at the last hop (docs/decisions/270-control-first.md): a site whose uplink is busy with a
 * detail upload that takes minutes still takes a plan request as soon as its relay has it. Real hub,
 * relay and agent processes; the agent's link delays each direction 2 s and caps the uplink at 2 kB/s.
 */
const group = new ProcessGroup();
const links: LinkHandle[] = [];
let agent: ChildProcess | null = null;
let dir = '';
afterAll(async () => {
  if (agent && agent.exitCode === null) {
    const done = new Promise((r) => agent?.once('exit', r));
    agent.kill('SIGTERM');
    await done;
  }
  await group.stopAll();
  for (const l of links) await l.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
}, 60_000);

interface LogLine {
  msg?: string;
  time?: number;
  reason?: string;
  component?: string;
}

describe('control first at the last hop', () => {
  it('acts on a plan request while a long detail upload is still going up', {
    timeout: 600_000,
  }, async () => {
    dir = mkdtempSync(join(tmpdir(), 'driftline-control-'));
    const [hubPort, relayPort] = [await freePort(), await freePort()];
    const {
      config: hubConfig,
      key,
      relayToken,
      api,
      url,
    } = await setUpHub(dir, hubPort, {
      name: 'relay-1',
      sites: ['ship-7'],
    });
    const link = await startLink({
      name: 'slow-uplink',
      target: { port: relayPort },
      controlPort: false,
      settings: {
        uplink: { delayMs: 2000, bandwidthBps: 16_000 },
        downlink: { delayMs: 2000 },
      },
    });
    links.push(link);
    const relayConfig = join(dir, 'relay.yaml');
    writeFileSync(
      relayConfig,
      stringify({
        name: 'relay-1',
        dataDir: join(dir, 'relay'),
        listen: { port: relayPort },
        sites: ['ship-7'],
        upstreams: [{ url, token: relayToken }],
        forward: { idleMs: 300, pullIntervalMs: 500, backoffBaseMs: 300, backoffMaxMs: 1000 },
      }),
    );
    const site = join(dir, 'ship-7');
    const work = join(site, 'stacks/app');
    mkdirSync(work, { recursive: true });
    writeFileSync(join(work, 'main.tf'), '# app\n');
    // A big plan (every extra resource changed): its detail blob, ~90 kB, takes most of a minute at 2 kB/s.
    writeFileSync(
      join(work, 'fake-terraform.yaml'),
      'seed: 3\nloop: false\nextraResources: 2000\nextraChanges: true\nsteps:\n  - { state: changes }\n',
    );
    const agentToken = JSON.parse(
      await runProgram('relay', ['token', 'add', 'ship-7', '--config', relayConfig, '--json']),
    ).token;
    writeFileSync(join(site, 'token'), agentToken);
    writeFileSync(join(site, 'hub.pub'), key);
    const agentConfig = join(site, 'agent.yaml');
    writeFileSync(
      agentConfig,
      stringify({
        site: 'ship-7',
        agent: 'a1',
        dataDir: './data',
        hubPublicKeyFile: './hub.pub',
        upstreams: [{ url: `http://127.0.0.1:${link.port}`, tokenFile: './token' }],
        components: [
          { name: 'app', workingDir: './stacks/app', environments: ['prod'], schedule: '0 0 1 1 *' },
        ],
        sync: { jitterS: 0, backoffBaseS: 0.5, backoffCapS: 2, planOnStart: true },
      }),
    );
    const init = JSON.parse(await runProgram('agent', ['init', '--config', agentConfig, '--json']));
    await runProgram('hub', [
      'enroll',
      '--config',
      hubConfig,
      '--site',
      'ship-7',
      '--agent',
      'a1',
      '--key',
      init.publicKey,
    ]);

    const hubProc = group.start(BINS.hub, ['run', '--config', hubConfig]);
    await waitForHttp(`${url}/v1/health`, 60_000, () => hubProc.exitCode === null);
    const relay = group.start(BINS.relay, ['run', '--config', relayConfig]);
    await waitForHttp(`http://127.0.0.1:${relayPort}/v1/health`, 60_000, () => relay.exitCode === null);

    // The agent's own log says when it recorded what.
    const lines: LogLine[] = [];
    const c = commandFor(BINS.agent);
    agent = spawn(c.cmd, [...c.args, 'run', '--config', agentConfig], {
      cwd: site,
      env: {
        ...process.env,
        LOG_LEVEL: 'info',
        PATH: `${FAKE_TERRAFORM_DIR}:${process.env.PATH}`,
        FAKE_TERRAFORM_STATE_DIR: join(site, 'tfstate'),
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let rest = '';
    agent.stderr?.on('data', (d: Buffer) => {
      const text = rest + d.toString();
      const parts = text.split('\n');
      rest = parts.pop() ?? '';
      for (const p of parts) {
        try {
          lines.push(JSON.parse(p) as LogLine);
        } catch {}
      }
    });

    // The first plan's result reaches the hub; its detail is still on its way (the slow uplink).
    const first = await until(
      'the first plan at the hub',
      async () => {
        const r = (await (await api('/api/matrix?site=ship-7')).json()) as {
          cells: { component: string; runId: string | null }[];
        };
        return r.cells.find((x) => x.component === 'app')?.runId ?? undefined;
      },
      300_000,
    );
    const detail = async () =>
      ((await (await api(`/api/runs/${first}`)).json()) as { detailState?: string }).detailState;
    expect(await detail()).toBe('pending');

    const made = await api('/api/plan-requests', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ site: 'ship-7', environment: 'prod', component: 'app' }),
    });
    expect(made.status).toBe(201);

    // The agent plans on the request while the first detail is still going up.
    await until(
      'the requested plan recorded at the agent',
      async () => lines.some((l) => l.msg === 'result recorded' && l.reason === 'request'),
      300_000,
    );
    expect(await detail()).toBe('pending');
    // And the detail still arrives in the end.
    await until('the first detail at the hub', async () => (await detail()) === 'arrived', 600_000, 1000);
  });
});
