import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { freePort, waitForHttp } from '../src/topology/ports.js';
import { BINS, FAKE_TERRAFORM_DIR, runProgram } from '../src/topology/programs.js';
import { ProcessGroup, setUpHub, until } from './support.js';

const group = new ProcessGroup();
afterAll(() => group.stopAll());

describe('agent → relay → relay → hub, as processes', () => {
  it('carries results up two relays, acks and a plan request down them, and the hub serves the run', {
    timeout: 300_000,
  }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'driftline-chain-'));
    const [hubPort, outerPort, innerPort] = [await freePort(), await freePort(), await freePort()];
    const {
      config: hubConfig,
      key: hubKey,
      relayToken: outerToken,
      api,
    } = await setUpHub(dir, hubPort, {
      name: 'ground-1',
      sites: ['ship-7'],
    });
    // The outer relay (ground station) talks to the hub; the inner one (the ship's LAN) to the outer one.
    const relayConfig = (name: string, port: number, upstreamPort: number, token: string) => {
      const path = join(dir, `${name}.yaml`);
      writeFileSync(
        path,
        stringify({
          name,
          dataDir: join(dir, name),
          listen: { port },
          sites: ['ship-7'],
          upstreams: [{ url: `http://127.0.0.1:${upstreamPort}`, token }],
          forward: { idleMs: 300, pullIntervalMs: 1000, backoffBaseMs: 300, backoffMaxMs: 3000 },
        }),
      );
      return path;
    };
    const outer = relayConfig('ground-1', outerPort, hubPort, outerToken);
    const innerToken = JSON.parse(
      await runProgram('relay', [
        'token',
        'add',
        'ship-lan',
        '--sites',
        'ship-7',
        '--config',
        outer,
        '--json',
      ]),
    ).token;
    const inner = relayConfig('ship-lan', innerPort, outerPort, innerToken);
    const agentToken = JSON.parse(
      await runProgram('relay', ['token', 'add', 'ship-7', '--config', inner, '--json']),
    ).token;

    const site = join(dir, 'ship-7');
    mkdirSync(join(site, 'infra', 'network'), { recursive: true });
    writeFileSync(join(site, 'token'), agentToken);
    writeFileSync(join(site, 'hub.pub'), hubKey);
    const agentConfig = join(site, 'agent.yaml');
    writeFileSync(
      agentConfig,
      stringify({
        site: 'ship-7',
        agent: 'a1',
        dataDir: './data',
        hubPublicKeyFile: './hub.pub',
        upstreams: [{ url: `http://127.0.0.1:${innerPort}`, tokenFile: './token' }],
        // A schedule that will not fire during the test: the plans are the one at start and the request's
        // (which, when it finds the same plan, only confirms the cell; the hub counts that as done).
        components: [
          { name: 'network', workingDir: './infra/network', environments: ['prod'], schedule: '0 0 1 1 *' },
        ],
        sync: { intervalS: 1, jitterS: 0 },
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

    group.start(BINS.hub, ['run', '--config', hubConfig]);
    await waitForHttp(`http://127.0.0.1:${hubPort}/v1/health`, 60_000);
    group.start(BINS.relay, ['run', '--config', outer]);
    group.start(BINS.relay, ['run', '--config', inner]);
    await waitForHttp(`http://127.0.0.1:${innerPort}/v1/health`, 60_000);
    group.start(BINS.agent, ['run', '--config', agentConfig], {
      cwd: site,
      env: { PATH: `${FAKE_TERRAFORM_DIR}:${process.env.PATH}` },
    });

    // The hub knows the cell from the agent's declared facts; ask for a plan of it: the request goes down two relays.
    await until('the agent to report in', async () => {
      const r = await api('/api/sites/ship-7');
      return (
        r.ok &&
        ((await r.json()) as { agents: Array<{ lastContactAt: string | null }> }).agents[0]?.lastContactAt
      );
    });
    // The hub's first ack reached the agent: it says the hub reads confirmations written apart from
    // their cells, so the request's plan (the same plan again) is written so (decision 330).
    const status = async () =>
      JSON.parse(await runProgram('agent', ['status', '--config', agentConfig, '--json'], { cwd: site })) as {
        unackedRuns: number;
        lastAckAt: string | null;
      };
    await until('the first ack at the agent', async () => (await status()).lastAckAt !== null);
    const plannedAt = async () => {
      const m = (await (await api('/api/matrix?site=ship-7')).json()) as {
        cells: Array<{ component: string; plannedAt: string | null }>;
      };
      return Date.parse(m.cells.find((c) => c.component === 'network')?.plannedAt ?? '') || 0;
    };
    // The first ack may carry only the declared facts: wait (bounded) for the cell's first plan at the hub.
    const firstPlannedAt = await until('the first plan of the cell at the hub', async () => {
      const at = await plannedAt();
      return at > 0 ? at : false;
    });
    const req = await until('the hub to accept a plan request', async () => {
      const r = await api('/api/plan-requests', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ site: 'ship-7', environment: 'prod', component: 'network' }),
      });
      return r.ok ? ((await r.json()) as { requestId: string }) : false;
    });
    const done = await until('the plan request to be done', async () => {
      const r = await api(`/api/plan-requests/${req.requestId}`);
      const b = (await r.json()) as { state: string; runId: string | null };
      return b.state === 'done' ? b : false;
    });
    expect(done.runId).toMatch(/^[0-9A-Z]{26}$/);
    const matrix = (await (await api('/api/matrix?site=ship-7')).json()) as {
      cells: Array<{ status: string; runId: string }>;
    };
    expect(matrix.cells.map((c) => c.status)).not.toContain('no-data');
    const run = (await (await api(`/api/runs/${done.runId}`)).json()) as {
      summary: { component: string };
    };
    expect(run.summary.component).toBe('network');
    // The confirmation moved the cell's age at the hub, as a rewritten cell did.
    await until(
      'the confirmation to move the cell at the hub',
      async () => (await plannedAt()) > firstPlannedAt,
    );
    // The hub's ack came back down both relays: the agent holds nothing unacknowledged.
    await until('the agent to have everything acknowledged', async () => {
      const s = await status();
      return s.unackedRuns === 0 && s.lastAckAt !== null;
    });
  });
});
