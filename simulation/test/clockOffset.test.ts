import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { type LinkHandle, startLink } from '../src/index.js';
import { freePort, waitForHttp } from '../src/topology/ports.js';
import { BINS, FAKE_TERRAFORM_DIR, runProgram } from '../src/topology/programs.js';
import { ProcessGroup, setUpHub, until } from './support.js';

const group = new ProcessGroup();
const links: LinkHandle[] = [];
afterAll(async () => {
  await group.stopAll();
  for (const l of links) await l.close();
});

const AGENT_SKEW_MS = 7 * 60_000;
const RELAY_SKEW_MS = -90_000;
const SKEW_PRELOAD = fileURLToPath(new URL('./skewClock.mjs', import.meta.url));
/** Environment that moves a program's wall clock (a machine whose clock is wrong). */
const skewed = (ms: number) => ({
  NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=${SKEW_PRELOAD}`.trim(),
  DRIFTLINE_TEST_CLOCK_SKEW_MS: String(ms),
});

interface Cell {
  environment: string;
  component: string;
  runId: string | null;
  plannedAt: string | null;
  receivedAt: string | null;
}
interface Site {
  clockOffsetMs: number | null;
  clockOffsetUncertaintyMs: number | null;
  agents: { clockOffsetMs: number | null; clockOffsetUncertaintyMs: number | null }[];
  matrix: Cell[];
}

/**
 * A hub, a relay 90 s slow and two agents 7 min fast behind emulated Mars links, the agents on hop `wire`:
 * each site's first result is dated on the hub's clock within the stated uncertainty of the truth. On v2
 * the agent's estimate travels in its signed push (field 10, where every node states `clock`: decision 495).
 */
async function keepsAgesWithinUncertainty(wire: 1 | 2): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), `driftline-clock-v${wire}-`));
  const [hubPort, relayPort] = [await freePort(), await freePort()];
  const sites = ['mars-sym', 'mars-asym'];
  const hub = await setUpHub(dir, hubPort, { name: 'ground-1', sites });
  const relayConfig = join(dir, 'relay.yaml');
  const writeRelayConfig = (token: string) =>
    writeFileSync(
      relayConfig,
      stringify({
        name: 'ground-1',
        dataDir: join(dir, 'relay'),
        listen: { port: relayPort },
        sites,
        upstreams: [{ url: hub.url, token }],
        forward: { idleMs: 300, pullIntervalMs: 1000, backoffBaseMs: 300, backoffMaxMs: 3000 },
      }),
    );
  writeRelayConfig(hub.relayToken);
  // The relay's key enrolled (the default, decision 415): through an unkeyed relay the hub would take
  // only the agent's own bound, never the round trips it reports.
  const relayKey = (await runProgram('relay', ['key', '--config', relayConfig])).trim();
  const rotate = ['peer', 'rotate', 'ground-1', '--key', relayKey, '--json', '--config', hub.config];
  writeRelayConfig((JSON.parse(await runProgram('hub', rotate)) as { token: string }).token);
  // The Mars profile compressed 360 times: 12 min one way becomes 2 s; the asymmetric link is 1.5 s
  // toward headquarters and 3 s back. Always up: the contact windows are not the point here.
  const delays = { 'mars-sym': [2000, 2000], 'mars-asym': [1500, 3000] } as const;
  const agents: Record<string, string> = {};
  for (const site of sites) {
    const [up, down] = delays[site as keyof typeof delays];
    const link = await startLink({
      name: site,
      target: { port: relayPort },
      profile: 'mars',
      timeScale: 360,
      settings: { uplink: { delayMs: up }, downlink: { delayMs: down }, schedule: null },
      controlPort: false,
    });
    links.push(link);
    const token = JSON.parse(
      await runProgram('relay', ['token', 'add', site, '--config', relayConfig, '--json']),
    ).token;
    const home = join(dir, site);
    mkdirSync(join(home, 'infra', 'network'), { recursive: true });
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
        upstreams: [{ url: `http://127.0.0.1:${link.port}`, tokenFile: './token' }],
        components: [
          { name: 'network', workingDir: './infra/network', environments: ['prod'], schedule: '0 0 1 1 *' },
        ],
        sync: { intervalS: 1, jitterS: 0, recordWindowS: 0, wire },
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
    agents[site] = config;
  }

  group.start(BINS.hub, ['run', '--config', hub.config]);
  await waitForHttp(`${hub.url}/v1/health`, 60_000);
  group.start(BINS.relay, ['run', '--config', relayConfig], { env: skewed(RELAY_SKEW_MS) });
  await waitForHttp(`http://127.0.0.1:${relayPort}/v1/health`, 60_000);
  for (const site of sites)
    group.start(BINS.agent, ['run', '--config', agents[site] as string], {
      cwd: join(dir, site),
      env: { PATH: `${FAKE_TERRAFORM_DIR}:${process.env.PATH}`, ...skewed(AGENT_SKEW_MS) },
    });

  for (const site of sites) {
    const [up, down] = delays[site as keyof typeof delays];
    // 17 s alone; once, beside the whole suite, no estimate within 90 s (not traced): up to 240 s
    const { s, cell } = await until(
      `a result from ${site} with a round-trip offset`,
      async () => {
        const r = await hub.api(`/api/sites/${site}`);
        const s = (await r.json()) as Site;
        const cell = s.matrix.find((c) => c.runId && c.plannedAt);
        return cell && s.clockOffsetUncertaintyMs != null ? { s, cell } : undefined;
      },
      240_000,
    );
    const run = (await (await hub.api(`/api/runs/${cell.runId}`)).json()) as {
      plannedAt: string;
      receivedAt: string;
      summary: { finishedAt: string };
    };
    // The agent stamped the run with its own clock: the truth is that time minus its skew.
    const truePlanned = Date.parse(run.summary.finishedAt) - AGENT_SKEW_MS;
    const unc = s.clockOffsetUncertaintyMs as number;
    const offsetError = (s.clockOffsetMs as number) - AGENT_SKEW_MS;
    const plannedError = Date.parse(run.plannedAt) - truePlanned;
    const trueLag = Date.parse(run.receivedAt) - truePlanned;
    const lagError = Date.parse(run.receivedAt) - Date.parse(run.plannedAt) - trueLag;
    console.log(
      JSON.stringify({
        site,
        wire,
        oneWayMs: { up, down },
        offsetMs: s.clockOffsetMs,
        uncertaintyMs: unc,
        offsetErrorMs: offsetError,
        plannedErrorMs: plannedError,
        trueLagMs: trueLag,
        shownLagMs: trueLag + lagError,
      }),
    );
    expect(s.agents[0]?.clockOffsetUncertaintyMs).toBe(unc);
    // The estimate holds within its uncertainty; ages and lags within the uncertainty and a second.
    expect(Math.abs(offsetError)).toBeLessThanOrEqual(unc);
    expect(Math.abs(plannedError)).toBeLessThanOrEqual(unc + 1000);
    expect(Math.abs(lagError)).toBeLessThanOrEqual(unc + 1000);
    // Half the round trip of the Mars hop (and a little for the relay's hop and processing: up to 2.2 s
    // more beside a whole suite on a slow machine, where 1 s was the bound; the truth is within it above).
    expect(unc).toBeGreaterThanOrEqual((up + down) / 2);
    expect(unc).toBeLessThan((up + down) / 2 + 3000);
    // The link delay is no longer read as clock error (one-way transit would be `up` ms off, too
    // young): what is left is the link's asymmetry, half the difference of its delays, and half the
    // processing time the exchange took on one side, which the uncertainty carries too (its part above
    // half the link's round trip). Idle that part is ~100 ms; beside a whole run on a slow machine 1.8 s
    // (error 1,734 ms, uncertainty 3,781 ms), so the bound follows it (at least 1 s; it was 500 ms).
    const slack = Math.max(1000, unc - (up + down) / 2 + 500);
    expect(Math.abs(offsetError - (down - up) / 2)).toBeLessThanOrEqual(slack);
  }
  // each agent pushed on the wire it was given: v2 messages to the relay, or none
  const metrics = await fetch(`http://127.0.0.1:${relayPort}/metrics`, {
    headers: { authorization: `Bearer ${readFileSync(join(dir, sites[0] as string, 'token'), 'utf8')}` },
  }).then((r) => r.text());
  for (const site of sites) {
    const pushes = metrics
      .split('\n')
      .filter((l) => l.startsWith('driftline_hop_v2_messages_total{') && l.includes('kind="push"'))
      .filter((l) => l.includes(`peer="${site}"`))
      .reduce((n, l) => n + Number(l.split(' ').at(-1)), 0);
    if (wire === 2) expect(pushes, `${site}'s v2 pushes`).toBeGreaterThanOrEqual(1);
    else expect(pushes, `${site}'s v2 pushes`).toBe(0);
  }
}

// Each case's bound is for a hang, not a speed check: CI ran the file in 238 s, and a clean clone beside other
// work ran one case past 300 s.
describe('clock offsets over an emulated Mars link', () => {
  it(
    'keeps ages and arrival lags within their uncertainty of the truth, over symmetric and asymmetric links',
    {
      timeout: 480_000,
    },
    () => keepsAgesWithinUncertainty(1),
  );

  it(
    'keeps them so with the agents on hop v2 (their estimate in the signed push)',
    {
      timeout: 480_000,
    },
    () => keepsAgesWithinUncertainty(2),
  );
});
