import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { profileSettings } from '../src/core/link/profiles.js';
import { runProgram } from '../src/topology/programs.js';
import { worldTmp } from '../src/world/World.js';
import { worldUrl } from '../src/world/WorldNetwork.js';
import { setUpHub, until } from './support.js';
import { RELAY, startVirtualHeadquarters, type VirtualHeadquarters } from './virtualHeadquarters.js';

/**
 * Approve at headquarters, apply at the outpost (issue 28), in the deterministic world
 * (docs/decisions/540-deterministic-world.md): hub, relay and agent built by their programs' factories in
 * one process, the agent behind the Mars link compressed ×360 (2 s one way, its bandwidths), headquarters'
 * `hub source publish` and `hub approve` as the programs on the hub's socket, their clock the world's.
 * A change to main is planned at the site, approved at headquarters while the link is down, delivered at
 * the first contact after it comes back (to the millisecond: on a pull the agent opened as its first push
 * after the link's return was answered, one light time each way); its saved plan is stale by then, so the apply fails and the cell is planned again
 * as a new run, which is approved again, applied, and the confirming clean plan reaches the hub. On the
 * fake terraform; the real one's case stays a process test (`apply.test.ts`).
 */
const SITE = 'mars-base';
const MARS = profileSettings('mars', 360);
if (!MARS.ok) throw new Error(MARS.problem);
/** One way, ms (12 minutes ×360). */
const D = MARS.oneWayDelayMs;
let dir = '';
let hq: VirtualHeadquarters | null = null;
afterAll(async () => {
  await hq?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.email=hq@example.org', '-c', 'user.name=hq', ...args], {
    cwd,
    encoding: 'utf8',
  }).trim();

interface Cell {
  component: string;
  status: string;
  runId: string | null;
  commit?: string | null;
}
interface Journey {
  approvalId: string;
  runId: string;
  state: string;
  reason: string | null;
  submittedAt: string;
  deliveredAt: string | null;
  nextRunId: string | null;
}

describe('approve at headquarters, apply at Mars (fake terraform, the world)', () => {
  it('an approval made while the link is down arrives at the first contact after it; a stale saved plan fails to apply, the re-plan is approved again and applied, then the cell plans clean', async () => {
    dir = mkdtempSync(join(worldTmp(), 'driftline-apply-world-'));
    // The files, made by the programs' own commands before the world starts, as the process test did.
    const hub = await setUpHub(dir, 0, { name: RELAY, sites: [SITE] });
    const token = async (name: string, role: string) => {
      const add = ['user', 'add', name, '--role', role, '--config', hub.config, '--json'];
      const f = join(dir, `${name}.token`);
      writeFileSync(f, (JSON.parse(await runProgram('hub', add)) as { token: string }).token);
      return f;
    };
    const ciToken = await token('ci', 'publisher');
    const adaToken = await token('ada', 'approver');
    const keyFile = join(dir, 'ada.pem');
    const keygen = await runProgram('hub', ['approver', 'keygen', '--out', keyFile]);
    const approverKey = /ed25519:[A-Za-z0-9_-]{43}/.exec(keygen)?.[0] as string;
    expect(approverKey).toBeTruthy();
    await runProgram('hub', ['approver', 'add', 'Ada', '--key', approverKey, '--config', hub.config]);

    const site = join(dir, SITE);
    // The fake keeps its state (run count, serial) here.
    const stateFile = join(site, 'tfstate', 'state.json');
    // Headquarters' repository: main proposes a change; once applied, the next plan is clean.
    const repo = join(dir, 'infra');
    mkdirSync(join(repo, 'stacks/app'), { recursive: true });
    git(repo, 'init', '-q', '-b', 'main');
    writeFileSync(join(repo, 'stacks/app/main.tf'), '# app\n');
    // One state, repeated: a plan shows changes until they are applied, then clean.
    writeFileSync(
      join(repo, 'stacks/app/fake-terraform.yaml'),
      'seed: 9\nloop: false\nsteps:\n  - { state: changes }\n',
    );
    git(repo, 'add', '.');
    git(repo, 'commit', '-qm', 'app: a change to apply');
    const commit = git(repo, 'rev-parse', 'HEAD');

    const relayConfig = join(dir, 'relay.yaml');
    writeFileSync(
      relayConfig,
      stringify({
        name: RELAY,
        dataDir: join(dir, 'relay'),
        listen: { port: 0 },
        sites: [SITE],
        upstreams: [{ url: worldUrl('hub'), token: hub.relayToken }],
        forward: { idleMs: 300, pullIntervalMs: 1000, backoffBaseMs: 300, backoffMaxMs: 1000 },
        publications: { intervalMs: 500 },
      }),
    );
    mkdirSync(site, { recursive: true });
    const agentToken = JSON.parse(
      await runProgram('relay', ['token', 'add', SITE, '--config', relayConfig, '--json']),
    ).token as string;
    writeFileSync(join(site, 'token'), agentToken);
    writeFileSync(join(site, 'hub.pub'), hub.key);
    const agentConfig = join(site, 'agent.yaml');
    writeFileSync(
      agentConfig,
      stringify({
        site: SITE,
        agent: 'a1',
        dataDir: './data',
        hubPublicKeyFile: './hub.pub',
        upstreams: [{ url: worldUrl(RELAY), tokenFile: './token' }],
        components: [
          {
            name: 'app',
            source: { repo: 'infra', path: 'stacks/app', refs: ['main'] },
            environments: ['prod'],
            schedule: '0 0 1 1 *',
            apply: { refs: ['main'], approvers: [approverKey], quorum: 1, maxApprovalAgeS: 86_400 },
          },
        ],
        sync: { intervalS: 1, jitterS: 0, backoffBaseS: 0.5, backoffCapS: 2, planOnStart: false },
        publications: { retryMs: 500 },
      }),
    );
    const init = JSON.parse(await runProgram('agent', ['init', '--config', agentConfig, '--json']));
    await runProgram('hub', [
      'enroll',
      '--config',
      hub.config,
      '--site',
      SITE,
      '--agent',
      'a1',
      '--key',
      init.publicKey,
    ]);

    // Up until the test cuts it (as the process test forced it: Mars' own schedule is not what is asserted).
    hq = await startVirtualHeadquarters({
      hubConfig: hub.config,
      adminToken: hub.adminToken,
      relayConfig,
      relayToken: hub.relayToken,
      sites: [
        {
          name: SITE,
          dir: site,
          agentConfig,
          link: { ...MARS.settings, schedule: null },
          toolEnv: { FAKE_TERRAFORM_STATE_DIR: join(site, 'tfstate') },
        },
      ],
      seed: 28,
    });
    const w = hq;
    const mars = w.link(SITE);
    const cell = async () => {
      const r = await w.api(`/api/matrix?site=${SITE}`);
      return ((await r.json()) as { cells: Cell[] }).cells.find((c) => c.component === 'app');
    };
    const journey = async (runId: string) => {
      const r = await w.api(`/api/approvals?site=${SITE}`);
      return ((await r.json()) as { approvals: Journey[] }).approvals.find((j) => j.runId === runId);
    };
    const approve = async (runId: string) => {
      const a = await w.hq([
        'approve',
        '--key',
        keyFile,
        '--run',
        runId,
        '--expires',
        '2h',
        ...w.remote(adaToken),
      ]);
      expect(a.stderr).toBe('');
      expect(a.code).toBe(0);
    };
    const planFileSha = async (runId: string) =>
      ((await (await w.api(`/api/runs/${runId}`)).json()) as { summary: { planFileSha256?: string } }).summary
        .planFileSha256;

    const pub = await w.hq([
      'source',
      'publish',
      '--repo',
      repo,
      '--ref',
      'main',
      '--site',
      SITE,
      '--name',
      'infra',
      ...w.remote(ciToken),
    ]);
    expect(pub.code).toBe(0);
    const published = Date.now();
    const planned = await until(
      'the change to be planned at Mars',
      async () => {
        const c = await cell();
        return c?.status === 'changes' && c.commit === commit ? c : undefined;
      },
      600_000,
    );
    const runId = planned.runId as string;
    // Nothing comes before its light time: the bundle down, the plan's result up.
    expect(Date.now() - published).toBeGreaterThanOrEqual(2 * D);
    expect(await planFileSha(runId)).toMatch(/^[0-9a-f]{64}$/);

    // Control bundles the relay holds for Mars (its /metrics, read with the agent's peer token).
    const heldAtRelay = async () => {
      const text = await (await w.relayCall('/metrics', agentToken)).text();
      const line = text
        .split('\n')
        .find(
          (l) =>
            l.startsWith('driftline_relay_queue_depth{') &&
            l.includes(`destination="${SITE}"`) &&
            l.includes('priority="control"'),
        );
      return Number(line?.split(' ').at(-1) ?? 0);
    };

    // The link goes down; the state moves on elsewhere (someone applied: its saved plan is stale);
    // headquarters approves meanwhile.
    mars.cut();
    const downAt = Date.now();
    mkdirSync(dirname(stateFile), { recursive: true });
    writeFileSync(stateFile, JSON.stringify({ serial: 7 }));
    const controlBefore = await heldAtRelay();
    await approve(runId);
    // The relay takes the approval from the hub and holds it for Mars. The hub does not call it delivered:
    // only the agent's own record says that (docs/decisions/300-delivery-the-agent-confirms.md).
    await until('the relay to hold the approval', async () => (await heldAtRelay()) > controlBefore, 60_000);
    expect(await journey(runId)).toMatchObject({ runId, state: 'submitted', deliveredAt: null });
    // Held, not delivered, for as long as the link stays down (a minute of world time here).
    await new Promise((r) => setTimeout(r, 60_000));
    expect(w.line(SITE, 'approval received')).toBeUndefined();
    expect(await journey(runId)).toMatchObject({ state: 'submitted', deliveredAt: null });
    expect(mars.exchanges.filter((e) => e.answeredAt !== undefined && e.answeredAt > downAt)).toEqual([]);

    // At the next contact the agent verifies and applies: the saved plan is stale. It plans again.
    mars.heal();
    const upAt = Date.now();
    const received = await until(
      'the approval recorded at Mars',
      async () => w.line(SITE, 'approval received'),
      600_000,
    );
    // Delivered at the first contact after the link came back. While the link is down the agent only
    // probes (`GET /v1/health`, before its push: `SyncEngine`); the first probe answered after the link came
    // back is the first contact, and at that instant the agent opens its pulls, beside the push
    // (docs/decisions/625-pulls-go-when-the-probe-answers.md). The approval came down on one of them, at the
    // instant its answer arrived, one light time each way after it left: the relay held it and answered at once.
    const after = mars.exchanges.filter((e) => e.sentAt >= upAt && e.answeredAt !== undefined);
    const contact = after.find((e) => e.url.endsWith('/v1/health')) as (typeof after)[number];
    expect(contact).toBeDefined();
    const carrier = after.find((e) => e.answeredAt === received.time && e.url.endsWith('/v2'));
    expect(carrier).toBeDefined();
    const c = carrier as (typeof after)[number];
    expect(c.sentAt).toBe(contact.answeredAt);
    expect((c.answeredAt as number) - c.sentAt).toBeGreaterThanOrEqual(2 * D);
    expect((c.answeredAt as number) - c.sentAt).toBeLessThan(2 * D + 1000);

    const failed = await until(
      'the stale apply and the plan after it',
      async () => {
        const j = await journey(runId);
        return j?.state === 'apply-failed' && j.nextRunId ? j : undefined;
      },
      600_000,
    );
    expect(failed.reason).toBe('stale-plan');
    // The agent's record of the delivery went up at once: the hub had it one light time later.
    const delivered = Date.parse(failed.deliveredAt as string) - (received.time as number);
    expect(delivered).toBeGreaterThanOrEqual(D);
    expect(delivered).toBeLessThan(D + 1000);
    const next = failed.nextRunId as string;
    expect(next).not.toBe(runId);
    // The re-plan is a run of its own with a plan file: the cell shows it and it can be approved again.
    await until(
      'the cell to show the re-plan',
      async () => {
        const c = await cell();
        return c?.status === 'changes' && c.runId === next;
      },
      300_000,
    );
    expect(await planFileSha(next)).toMatch(/^[0-9a-f]{64}$/);
    await approve(next);
    const applied = await until(
      'the apply and the confirming plan',
      async () => {
        const j = await journey(next);
        return j?.state === 'applied' && j.nextRunId ? j : undefined;
      },
      600_000,
    );
    expect(applied.reason).toBeNull();
    await until(
      'the cell to show the clean plan after the apply',
      async () => {
        const c = await cell();
        return c?.status === 'clean' && c.runId === applied.nextRunId;
      },
      300_000,
    );
    console.info(
      `apply.world: approval received ${((received.time as number) - upAt) / 1000} s of world time after the link came back (its first contact ${((contact.answeredAt as number) - upAt) / 1000} s after)`,
    );
  });
});
