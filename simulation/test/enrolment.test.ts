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

interface AgentStatus {
  unackedRuns: number;
  lastAckAt: number | null;
  rejections: Array<{ state: string; code: string; count: number; receivedAt: number; retryAt: number }>;
}

/** The hub's bounded wait after a rejection, set small so the test shows the bound. */
const REJECTED_RETRY_S = 5;

describe('an agent that pushes before the hub knows it', () => {
  it('shows waiting for enrolment, and its first result reaches the hub after `hub enroll`, nothing lost', {
    timeout: 300_000,
  }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'driftline-enrolment-'));
    const [hubPort, relayPort] = [await freePort(), await freePort()];
    const hub = await setUpHub(dir, hubPort, { name: 'ship-lan', sites: ['ship-7'] });
    const relayConfig = join(dir, 'relay.yaml');
    writeFileSync(
      relayConfig,
      stringify({
        name: 'ship-lan',
        dataDir: join(dir, 'relay-data'),
        listen: { port: relayPort },
        sites: ['ship-7'],
        upstreams: [{ url: hub.url, token: hub.relayToken }],
        forward: { idleMs: 300, pullIntervalMs: 1000, backoffBaseMs: 300, backoffMaxMs: 3000 },
      }),
    );
    const agentToken = JSON.parse(
      await runProgram('relay', ['token', 'add', 'ship-7', '--config', relayConfig, '--json']),
    ).token;

    const site = join(dir, 'ship-7');
    mkdirSync(join(site, 'infra', 'network'), { recursive: true });
    writeFileSync(join(site, 'token'), agentToken);
    writeFileSync(join(site, 'hub.pub'), hub.key);
    const agentConfig = join(site, 'agent.yaml');
    writeFileSync(
      agentConfig,
      stringify({
        site: 'ship-7',
        agent: 'a1',
        dataDir: './data',
        hubPublicKeyFile: './hub.pub',
        upstreams: [{ url: `http://127.0.0.1:${relayPort}`, tokenFile: './token' }],
        // Planned once at start; the schedule does not fire during the test.
        components: [
          { name: 'network', workingDir: './infra/network', environments: ['prod'], schedule: '0 0 1 1 *' },
        ],
        // The resend of relay-receipted changes stays at its six-hour default: only the rejection can
        // bring the result to the hub within this test.
        sync: { intervalS: 1, jitterS: 0, rejectedRetryS: REJECTED_RETRY_S },
      }),
    );
    const init = JSON.parse(await runProgram('agent', ['init', '--config', agentConfig, '--json']));
    const status = async (): Promise<AgentStatus> =>
      JSON.parse(await runProgram('agent', ['status', '--config', agentConfig, '--json'], { cwd: site }));

    group.start(BINS.hub, ['run', '--config', hub.config]);
    await waitForHttp(`${hub.url}/v1/health`, 60_000);
    group.start(BINS.relay, ['run', '--config', relayConfig]);
    await waitForHttp(`http://127.0.0.1:${relayPort}/v1/health`, 60_000);
    group.start(BINS.agent, ['run', '--config', agentConfig], {
      cwd: site,
      env: { PATH: `${FAKE_TERRAFORM_DIR}:${process.env.PATH}` },
    });

    // Not enrolled: the relay takes the bundles, the hub refuses them, and the agent learns it.
    const waiting = await until('the agent to show it waits for enrolment', async () => {
      const s = await status();
      return s.rejections[0]?.state === 'waiting for enrolment' && s.unackedRuns > 0 ? s : false;
    });
    expect(waiting.rejections[0]).toMatchObject({ code: 'unknown-agent' });
    expect(waiting.lastAckAt).toBeNull();
    const human = await runProgram('agent', ['status', '--config', agentConfig], { cwd: site });
    expect(human).toMatch(/waiting for enrolment \(unknown-agent\) since \d{4}-/);
    const matrixBefore = (await (await hub.api('/api/matrix?site=ship-7')).json()) as {
      cells: Array<{ runId: string | null }>;
    };
    expect(matrixBefore.cells.filter((c) => c.runId)).toEqual([]);

    await runProgram('hub', ['enroll', '--config', hub.config, init.enrollment]);
    // The un-acked resend waits sync.resendAfterS (6 h here): only the rejection's retry
    // (sync.rejectedRetryS) or the resend on enrolment can bring the result within this bounded wait.
    const cell = await until(
      'the first result on the hub’s matrix',
      async () => {
        const r = await hub.api('/api/matrix?site=ship-7');
        const m = (await r.json()) as { cells: Array<{ runId: string | null; status: string }> };
        return m.cells.find((c) => c.runId && c.status !== 'no-data');
      },
      (REJECTED_RETRY_S + 120) * 1000,
    );
    expect(cell.runId).toMatch(/^[0-9A-Z]{26}$/);

    // Nothing lost: the hub acknowledged every run the agent recorded, and the rejection is outdated.
    const done = await until('the agent to have everything acknowledged', async () => {
      const s = await status();
      return s.unackedRuns === 0 && s.lastAckAt !== null ? s : false;
    });
    expect(done.rejections).toEqual([]);
    const run = (await (await hub.api(`/api/runs/${cell.runId}`)).json()) as {
      summary: { component: string };
    };
    expect(run.summary.component).toBe('network');
  });
});
