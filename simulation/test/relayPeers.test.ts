import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RelaysResponse } from '@driftline/protocol';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { freePort, waitForHttp } from '../src/topology/ports.js';
import { BINS, FAKE_TERRAFORM_DIR, runProgram } from '../src/topology/programs.js';
import { ProcessGroup, setUpHub, until } from './support.js';

const group = new ProcessGroup();
afterAll(() => group.stopAll());

describe('a second site behind the same relay (hub, relay and two agents as processes)', () => {
  it('shows the refusal at the hub with the command that fixes it, and the site reaches the hub after only `hub peer sites`', {
    timeout: 300_000,
  }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'driftline-relay-peers-'));
    const [hubPort, relayPort] = [await freePort(), await freePort()];
    const hub = await setUpHub(dir, hubPort, { name: 'relay-1', sites: ['ship-7'] });
    const relayConfig = join(dir, 'relay.yaml');
    writeFileSync(join(dir, 'relay-upstream.token'), hub.relayToken);
    writeFileSync(
      relayConfig,
      stringify({
        name: 'relay-1',
        dataDir: join(dir, 'relay-data'),
        listen: { port: relayPort },
        // only the first site: the relay learns the second from the hub
        sites: ['ship-7'],
        upstreams: [{ url: `http://127.0.0.1:${hubPort}`, tokenFile: './relay-upstream.token' }],
        forward: { idleMs: 300, pullIntervalMs: 1000, backoffBaseMs: 300, backoffMaxMs: 3000 },
      }),
    );
    const agent = async (site: string) => {
      const home = join(dir, site);
      mkdirSync(join(home, 'infra', 'network'), { recursive: true });
      const token = JSON.parse(
        await runProgram('relay', ['token', 'add', site, '--sites', site, '--config', relayConfig, '--json']),
      ).token;
      writeFileSync(join(home, 'token'), token);
      writeFileSync(join(home, 'hub.pub'), hub.key);
      const config = join(home, 'agent.yaml');
      writeFileSync(
        config,
        stringify({
          site,
          agent: 'a1',
          dataDir: './data',
          hubPublicKeyFile: './hub.pub',
          upstreams: [{ url: `http://127.0.0.1:${relayPort}`, tokenFile: './token' }],
          components: [
            { name: 'network', workingDir: './infra/network', environments: ['prod'], schedule: '0 0 1 1 *' },
          ],
          // resendAfterS stays at its 6 h: the relay's refusal travels back, so the agent sends again
          // after rejectedRetryS
          sync: { intervalS: 1, jitterS: 0, rejectedRetryS: 3 },
        }),
      );
      const init = JSON.parse(await runProgram('agent', ['init', '--config', config, '--json']));
      await runProgram('hub', [
        'enroll',
        '--config',
        hub.config,
        '--site',
        site,
        '--agent',
        'a1',
        '--key',
        init.publicKey,
      ]);
      return { home, config };
    };
    const ship7 = await agent('ship-7');
    const ship8 = await agent('ship-8');

    group.start(BINS.hub, ['run', '--config', hub.config]);
    await waitForHttp(`${hub.url}/v1/health`, 60_000);
    group.start(BINS.relay, ['run', '--config', relayConfig]);
    await waitForHttp(`http://127.0.0.1:${relayPort}/v1/health`, 60_000);
    for (const a of [ship7, ship8])
      group.start(BINS.agent, ['run', '--config', a.config], {
        cwd: a.home,
        env: { PATH: `${FAKE_TERRAFORM_DIR}:${process.env.PATH}` },
      });

    // The hub refuses ship-8's bundles (the relay's token acts for ship-7 only); headquarters sees it.
    const relays = () => hub.api('/api/relays').then((r) => r.json() as Promise<RelaysResponse>);
    const problem = await until('the relay to report the refused site', async () => {
      const r = (await relays()).relays.find((x) => x.name === 'relay-1');
      return r?.problems.find((p) => p.code === 'sites-refused');
    });
    expect(problem.fix).toBe('hub peer sites relay-1 --sites ship-7,ship-8');
    expect(problem.message).toContain('ship-8');
    const before = (await relays()).relays[0];
    expect(before?.status?.upstreamRefusals).toMatchObject({ forbidden: expect.any(Number) });
    expect(before?.status?.sitesRefused).toEqual(['ship-8']);

    // The agent behind the relay learns it too: its status says what was refused and what fixes it.
    const refusedAt8 = await until('ship-8 to show the relay refusal', async () => {
      const out = await runProgram('agent', ['status', '--config', ship8.config], { cwd: ship8.home });
      return out.includes('(forbidden)') ? out : undefined;
    });
    expect(refusedAt8).toContain('hub peer sites RELAY');

    // The one fix, at the hub: no relay.yaml change, no restart.
    await runProgram('hub', ['peer', 'sites', 'relay-1', '--sites', 'ship-7,ship-8', '--config', hub.config]);
    const matrix = async (site: string) =>
      ((await (await hub.api(`/api/matrix?site=${site}`)).json()) as { cells: { status: string }[] }).cells;
    await until('ship-8 to reach the hub', async () =>
      (await matrix('ship-8')).some((c) => c.status !== 'no-data'),
    );
    // its ack came back down through the relay, which pulls ship-8's downlink now that the hub said so
    for (const a of [ship7, ship8])
      await until(`${a.home} to have everything acknowledged`, async () => {
        const s = JSON.parse(
          await runProgram('agent', ['status', '--config', a.config, '--json'], { cwd: a.home }),
        );
        return s.unackedRuns === 0 && s.lastAckAt !== null;
      });
    const after = await until('the relay to report no refused site', async () => {
      const r = (await relays()).relays[0];
      return r && r.status?.sitesRefused.length === 0 ? r : undefined;
    });
    expect(after.sites).toEqual(['ship-7', 'ship-8']);
    expect(after.status?.sites).toEqual(['ship-7', 'ship-8']);
    expect(after.problems.map((p) => p.code)).not.toContain('sites-refused');
  });
});
