import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { buildPlan } from '../core/terraform/planJson.js';
import { runProgram as runCli } from './programs.js';
import { writeRealStack } from './realStacks.js';
import { writeRecordedPlans } from './recordedPlans.js';
import type { SiteSpec, TopologySpec } from './spec.js';

export interface Layout {
  hubConfig: string;
  /** The admin user's token, kept beside the hub's config (mode 0600) so it can be found again. */
  adminToken: string;
  relayConfig: string;
  agentConfig(site: string): string;
  siteDir(site: string): string;
  logs: string;
}

export function layout(dir: string): Layout {
  return {
    hubConfig: join(dir, 'hub', 'hub.yaml'),
    adminToken: join(dir, 'hub', 'admin.token'),
    relayConfig: join(dir, 'relay', 'relay.yaml'),
    agentConfig: (site) => join(dir, 'sites', site, 'agent.yaml'),
    siteDir: (site) => join(dir, 'sites', site),
    logs: join(dir, 'logs'),
  };
}

const json = <T>(text: string) => JSON.parse(text) as T;

/**
 * `Promise.all` that returns (or throws the first failure) only once every step has ended: a set-up
 * that failed has nothing of its own still writing when its caller cleans up or tries again.
 */
async function settled<T extends readonly unknown[]>(
  steps: [...{ [K in keyof T]: Promise<T[K]> }],
): Promise<T> {
  const all = await Promise.allSettled(steps);
  const failed = all.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  return all.map((r) => (r as PromiseFulfilledResult<unknown>).value) as unknown as T;
}

/** The user `setUp` creates at the hub, with the admin role, for the dashboard and the tests. */
export const ADMIN_USER = 'demo-admin';

/** The URL that signs a browser in with `token` (the hub sets the session cookie and redirects to `/`). */
export function signInUrl(hubUrl: string, token: string): string {
  return `${hubUrl}/?token=${encodeURIComponent(token)}`;
}

/** What `setUp` made: where everything is, and the admin user's token (`Authorization: Bearer …`). */
export interface SetUpResult {
  layout: Layout;
  adminToken: string;
}

/** The scenario of `TopologySpec.heldLock`'s cell: two clean plans, then the lock held for good. */
const HELD_LOCK_STEPS = [{ state: 'clean', runs: 2 }, { state: 'locked' }];

/** Fake terraform scenarios: each cell goes through its own sequence of plan states. */
function scenario(component: string, environment: string, seed: number, heldLock = false) {
  const sequences = [
    [
      { state: 'clean', runs: 3 },
      { state: 'changes', runs: 2 },
      { state: 'drift', runs: 2 },
      { state: 'clean', runs: 2 },
    ],
    [
      { state: 'changes', runs: 2 },
      { state: 'changes', variant: 1, runs: 2 },
      { state: 'failed' },
      { state: 'clean', runs: 3 },
    ],
    [
      { state: 'clean', runs: 4 },
      { state: 'locked', runs: 2 },
      { state: 'clean', runs: 2 },
      { state: 'drift' },
    ],
    [
      { state: 'drift', runs: 2 },
      { state: 'clean', runs: 3 },
      { state: 'changes', runs: 2 },
    ],
    [
      { state: 'changes', variant: 1, runs: 3 },
      { state: 'clean', runs: 4 },
    ],
    [
      { state: 'clean', runs: 2 },
      { state: 'failed', runs: 2 },
      { state: 'changes', runs: 2 },
      { state: 'clean', runs: 2 },
    ],
  ];
  if (heldLock) return { component, environment, seed, by: 'runs', loop: false, steps: HELD_LOCK_STEPS };
  return { component, environment, seed, by: 'runs', loop: true, steps: sequences[seed % sequences.length] };
}

/**
 * Where nodes listen and whom they dial. The default is everything on 127.0.0.1 (`npm start`); the
 * Compose topology listens on all interfaces and dials links by service name (`link-ship-7`).
 */
export interface SetUpHosts {
  /** Interface the hub and relay listen on. Default 127.0.0.1. */
  listen?: string;
  /** Host of the relay→hub link. Default 127.0.0.1. */
  relayLink?: string;
  /** Host of a site's agent→relay link. Default 127.0.0.1. */
  siteLink?: (site: string) => string;
}

/**
 * Writes every node's config and creates its keys and credentials through the programs' own CLIs
 * (hub init/key/peer/enroll/user add, relay token add, edge-agent init), exactly as an operator would.
 */
export async function setUp(
  spec: TopologySpec,
  ports: { hub: number; relay: number; relayLink: number; siteLinks: Record<string, number> },
  hosts: SetUpHosts = {},
  opts: { progress?: (line: string) => void } = {},
): Promise<SetUpResult> {
  // Each CLI run as it starts and ends, where a caller asks (the Compose set-up step: its log then names a
  // step that never ends, which a set-up that prints only when done cannot).
  const runProgram: typeof runCli = opts.progress
    ? async (program, args, o) => {
        const flag = args.findIndex((a) => a.startsWith('--'));
        const what = [program, ...args.slice(0, flag < 0 ? args.length : flag)].join(' ');
        const t = Date.now();
        opts.progress?.(`${what} ...`);
        const out = await runCli(program, args, o);
        opts.progress?.(`${what}: ${((Date.now() - t) / 1000).toFixed(1)} s`);
        return out;
      }
    : runCli;
  const listenHost = hosts.listen ?? '127.0.0.1';
  const relayLinkHost = hosts.relayLink ?? '127.0.0.1';
  const siteLinkHost = hosts.siteLink ?? (() => '127.0.0.1');
  const l = layout(spec.dir);
  for (const d of ['hub', 'relay', 'logs']) mkdirSync(join(spec.dir, d), { recursive: true });
  writeFileSync(
    l.hubConfig,
    stringify({
      listen: { host: listenHost, port: ports.hub },
      dataDir: './data',
      ...(spec.uiDir ? { uiDir: spec.uiDir } : {}),
      ...(spec.hubApiPerMinute ? { api: { rateLimit: { perMinute: spec.hubApiPerMinute } } } : {}),
      defaultContactIntervalS: 120,
      sweepIntervalS: 2,
      // Time-compressed links: a window's contact may come 30 s after it (sync interval, backoff, Mars' light
      // time); a session of contacts ends after 20 s of silence when windows are learned.
      contactPlans: { graceS: 30, learnSilenceS: 20, ...spec.hubContactPlans },
    }),
  );
  await runProgram('hub', ['init', '--config', l.hubConfig]);
  const sites = spec.sites.map((s) => s.site);
  const writeRelayConfig = (token: string) =>
    writeFileSync(
      l.relayConfig,
      stringify({
        name: 'relay-1',
        dataDir: join(spec.dir, 'relay', 'data'),
        listen: { host: listenHost, port: ports.relay },
        sites,
        upstreams: [{ name: 'hub', url: `http://${relayLinkHost}:${ports.relayLink}`, token }],
        forward: { idleMs: 500, pullIntervalMs: 2000, backoffBaseMs: 500, backoffMaxMs: 10_000 },
      }),
    );
  // The relay's key first (`relay key` makes it in its data dir), so it is enrolled with it (decision 415).
  writeRelayConfig('not-yet');
  // Independent steps run side by side: each is a process start.
  const [hubKeyText, adminText, relayKey] = await settled([
    runProgram('hub', ['key', '--config', l.hubConfig]),
    runProgram('hub', ['user', 'add', ADMIN_USER, '--role', 'admin', '--config', l.hubConfig, '--json']),
    runProgram('relay', ['key', '--config', l.relayConfig]),
  ]);
  const peerText = await runProgram('hub', [
    'peer',
    'add',
    'relay-1',
    '--sites',
    sites.join(','),
    '--key',
    relayKey.trim(),
    '--config',
    l.hubConfig,
    '--json',
  ]);
  const hubKey = hubKeyText.trim();
  const admin = json<{ token: string }>(adminText);
  writeFileSync(l.adminToken, `${admin.token}\n`, { mode: 0o600 });
  const peer = json<{ token: string }>(peerText);
  writeRelayConfig(peer.token);
  // Each cell's scenario seed, in spec order, whatever order the sites finish in.
  const firstSeed = new Map<string, number>();
  let next = spec.seed ?? 1;
  for (const site of spec.sites) {
    firstSeed.set(site.site, next);
    next += site.components.reduce((n, c) => n + c.environments.length, 0);
  }
  // The sites are set up side by side (each CLI run is a process start; SQLite waits out the others).
  const setUpSite = async (site: SiteSpec) => {
    let seed = firstSeed.get(site.site) ?? 1;
    const dir = l.siteDir(site.site);
    mkdirSync(dir, { recursive: true });
    const token = json<{ token: string }>(
      await runProgram('relay', ['token', 'add', site.site, '--config', l.relayConfig, '--json']),
    );
    writeFileSync(join(dir, 'relay.token'), `${token.token}\n`, { mode: 0o600 });
    writeFileSync(join(dir, 'hub.pub'), `${hubKey}\n`);
    const components: Record<string, unknown>[] = [];
    for (const c of site.components) components.push(await componentConfig(c));
    writeAgentConfig(site, components);
    async function componentConfig(c: SiteSpec['components'][number]): Promise<Record<string, unknown>> {
      // Delivered code: the repository's commits bring the scenario; the real fake terraform plans them.
      if (c.source)
        return {
          name: c.name,
          source: c.source,
          environments: c.environments,
          schedule: c.schedule,
          timeoutS: 300,
          ...(c.apply ? { apply: c.apply } : {}),
        };
      for (const env of c.environments) {
        const wd = join(dir, 'infra', c.name, env);
        mkdirSync(wd, { recursive: true });
        // The real terraform plans a terraform_data stack with its own state (realStacks.ts).
        if (spec.terraform === 'real') await writeRealStack(wd, c.name, env, seed);
        else {
          const sc = scenario(c.name, env, seed, spec.heldLock === `${site.site}/${env}/${c.name}`);
          writeFileSync(join(wd, 'fake-terraform.json'), JSON.stringify(sc));
          if (spec.fastPlans) writeFastPlans(wd, c.name, env, seed, spec.fastPlans === 'quiet' ? 1 : 4);
          else if (spec.recordedPlans) writeRecordedPlans(wd, sc, c.name, env);
        }
        seed++;
      }
      const replayed = spec.terraform !== 'real' && (spec.fastPlans || spec.recordedPlans);
      return {
        name: c.name,
        workingDir: `./infra/${c.name}`,
        environments: c.environments.map((e) => ({ name: e, workingDir: e })),
        schedule: c.schedule,
        ...(replayed ? { command: ['sh', '{workingDir}/plan.sh'] } : {}),
        timeoutS: 300,
        lockRetryThreshold: 3,
      };
    }
    function writeAgentConfig(site: SiteSpec, components: Record<string, unknown>[]): void {
      writeFileSync(
        l.agentConfig(site.site),
        stringify({
          site: site.site,
          agent: site.agent,
          dataDir: './data',
          hubPublicKeyFile: './hub.pub',
          upstreams: [
            {
              url: `http://${siteLinkHost(site.site)}:${ports.siteLinks[site.site]}`,
              tokenFile: './relay.token',
            },
          ],
          components,
          sync: {
            intervalS: spec.agentSyncIntervalS ?? 10,
            jitterS: 5,
            backoffBaseS: 2,
            backoffCapS: 30,
            maxParallelRuns: 1,
            ...(spec.agentRecordWindowS !== undefined ? { recordWindowS: spec.agentRecordWindowS } : {}),
            ...spec.agentSync,
            ...site.agentSync,
          },
          ...(site.publications ? { publications: site.publications } : {}),
        }),
      );
    }
    const init = json<{ site: string; agent: string; publicKey: string }>(
      await runProgram('agent', ['init', '--config', l.agentConfig(site.site), '--json']),
    );
    await runProgram('hub', [
      'enroll',
      '--config',
      l.hubConfig,
      '--site',
      init.site,
      '--agent',
      init.agent,
      '--key',
      init.publicKey,
    ]);
  };
  await settled(spec.sites.map(setUpSite));
  return { layout: l, adminToken: admin.token };
}

/** Four plans a cell cycles through (each differs from the one before) and a script that prints the next. */
function writeFastPlans(wd: string, component: string, environment: string, seed: number, cycle = 4): void {
  const states = [
    { state: 'clean', variant: 0 },
    { state: 'changes', variant: 0 },
    { state: 'drift', variant: 0 },
    { state: 'changes', variant: 1 },
  ] as const;
  mkdirSync(join(wd, 'plans'), { recursive: true });
  states.forEach((st, i) => {
    const { plan } = buildPlan({
      component,
      environment,
      ...st,
      seed,
      extraResources: 0,
      terraformVersion: '1.9.8',
      timestamp: '2026-01-01T00:00:00Z',
    });
    writeFileSync(join(wd, 'plans', `${i}.json`), JSON.stringify(plan));
  });
  writeFileSync(
    join(wd, 'plan.sh'),
    `#!/bin/sh\n# Prints the next pre-generated plan (scenarios: many results for little CPU).\nd="$(dirname "$0")"\nn=$(cat "$d/.n" 2>/dev/null || echo 0)\necho $((n + 1)) > "$d/.n"\ncat "$d/plans/$((n % ${cycle})).json"\n`,
    { mode: 0o755 },
  );
}
