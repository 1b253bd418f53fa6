import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, afterEach, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { type LinkHandle, startLink } from '../src/link.js';
import { freePort, waitForHttp } from '../src/topology/ports.js';
import { BINS, runProgram } from '../src/topology/programs.js';
import { describeRealTerraform, realPath } from './realTerraform.js';
import { ProcessGroup, setUpHub, until } from './support.js';

/**
 * Approve at headquarters, apply at the outpost, as processes over the Mars link compressed ×360 (2 s one
 * way: every exchange still waits on the light time; the demo's ×60 made this file take minutes), on the
 * real terraform where it is on PATH (issue 28): a change to main is planned at the site, approved at
 * headquarters while the link is down, delivered when it comes back; its saved plan is stale by then, so
 * the apply fails and the cell is planned again as a new run, which is approved again, applied, and the
 * confirming clean plan reaches the hub. The real Terraform contract is the process lane's to keep; the
 * same journey on the fake terraform is `apply.world.test.ts`, in the deterministic world
 * (docs/decisions/540-deterministic-world.md).
 */
const group = new ProcessGroup();
const links: LinkHandle[] = [];
let dir = '';
const dirs: string[] = [];
afterEach(async () => {
  await group.stopAll();
  for (const l of links.splice(0)) await l.close();
  if (dir) dirs.push(dir);
}, 60_000);
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.email=hq@example.org', '-c', 'user.name=hq', ...args], {
    cwd,
    encoding: 'utf8',
  }).trim();

function hubCli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BINS.hub, ...args], { timeout: 300_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

interface Cell {
  site: string;
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
  deliveredAt: string | null;
  nextRunId: string | null;
}

/** The stack headquarters proposes (`terraform_data`). */
function writeStack(repo: string, stateFile: string): void {
  writeFileSync(
    join(repo, 'stacks/app/main.tf'),
    // The state outlives the agent's scratch checkouts: a local backend at a fixed path.
    `terraform {\n  backend "local" { path = ${JSON.stringify(stateFile)} }\n}\n` +
      'resource "terraform_data" "web" { input = "web-v5" }\noutput "web" { value = terraform_data.web.output }\n',
  );
}

/** Someone applied elsewhere: the state moved on since the plan, so its saved plan is stale. */
function moveStateOn(stateFile: string): void {
  mkdirSync(dirname(stateFile), { recursive: true });
  writeFileSync(
    stateFile,
    JSON.stringify({
      version: 4,
      terraform_version: '1.11.4',
      serial: 3,
      lineage: 'applied-elsewhere',
      outputs: {},
      resources: [],
      check_results: null,
    }),
  );
}

/**
 * Headquarters publishes a change; Mars plans it; an approval made while the link is down meets a stale
 * saved plan at the next contact (`apply-failed`, `stale-plan`); the re-plan is a run of its own that is
 * approved again, applied, and the next plan is clean.
 */
async function actLoop(): Promise<void> {
  dir = mkdtempSync(join(tmpdir(), 'driftline-apply-real-'));
  const [hubPort, relayPort] = [await freePort(), await freePort()];
  const {
    config: hubConfig,
    key,
    relayToken,
    api,
    url,
  } = await setUpHub(dir, hubPort, {
    name: 'ground-1',
    sites: ['mars-base'],
  });
  const token = async (name: string, role: string) => {
    const t = JSON.parse(
      await runProgram('hub', ['user', 'add', name, '--role', role, '--config', hubConfig, '--json']),
    ).token as string;
    const f = join(dir, `${name}.token`);
    writeFileSync(f, t);
    return f;
  };
  const ciToken = await token('ci', 'publisher');
  const adaToken = await token('ada', 'approver');
  const keyFile = join(dir, 'ada.pem');
  const keygen = await hubCli(['approver', 'keygen', '--out', keyFile]);
  expect(keygen.code).toBe(0);
  const approverKey = /ed25519:[A-Za-z0-9_-]{43}/.exec(keygen.stdout)?.[0] as string;
  expect(approverKey).toBeTruthy();
  await runProgram('hub', ['approver', 'add', 'Ada', '--key', approverKey, '--config', hubConfig]);

  const site = join(dir, 'mars-base');
  // The local backend's state file.
  const stateFile = join(site, 'tfstate', 'app.tfstate');
  // Headquarters' repository: main proposes a change; once applied, the next plan is clean.
  const repo = join(dir, 'infra');
  mkdirSync(join(repo, 'stacks/app'), { recursive: true });
  git(repo, 'init', '-q', '-b', 'main');
  writeStack(repo, stateFile);
  git(repo, 'add', '.');
  git(repo, 'commit', '-qm', 'app: a change to apply');
  const commit = git(repo, 'rev-parse', 'HEAD');

  const hubRelay = await startLink({
    name: 'hub-relay',
    target: { port: hubPort },
    profile: 'lan',
    controlPort: false,
  });
  const mars = await startLink({
    name: 'mars',
    target: { port: relayPort },
    profile: 'mars',
    timeScale: 360,
    controlPort: false,
  });
  links.push(hubRelay, mars);
  // Up until the test cuts it: at ×360 Mars' own schedule would close the window within 80 s.
  mars.control.force('up');
  const relayConfig = join(dir, 'relay.yaml');
  writeFileSync(
    relayConfig,
    stringify({
      name: 'ground-1',
      dataDir: join(dir, 'relay'),
      listen: { port: relayPort },
      sites: ['mars-base'],
      upstreams: [{ url: `http://127.0.0.1:${hubRelay.port}`, token: relayToken }],
      forward: { idleMs: 300, pullIntervalMs: 1000, backoffBaseMs: 300, backoffMaxMs: 1000 },
      publications: { intervalMs: 500 },
    }),
  );
  mkdirSync(site, { recursive: true });
  const agentToken = JSON.parse(
    await runProgram('relay', ['token', 'add', 'mars-base', '--config', relayConfig, '--json']),
  ).token;
  writeFileSync(join(site, 'token'), agentToken);
  writeFileSync(join(site, 'hub.pub'), key);
  const agentConfig = join(site, 'agent.yaml');
  writeFileSync(
    agentConfig,
    stringify({
      site: 'mars-base',
      agent: 'a1',
      dataDir: './data',
      hubPublicKeyFile: './hub.pub',
      upstreams: [{ url: `http://127.0.0.1:${mars.port}`, tokenFile: './token' }],
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
    hubConfig,
    '--site',
    'mars-base',
    '--agent',
    'a1',
    '--key',
    init.publicKey,
  ]);

  const hubProc = group.start(BINS.hub, ['run', '--config', hubConfig]);
  await waitForHttp(`${url}/v1/health`, 60_000, () => hubProc.exitCode === null);
  const relay = group.start(BINS.relay, ['run', '--config', relayConfig]);
  await waitForHttp(`http://127.0.0.1:${relayPort}/v1/health`, 60_000, () => relay.exitCode === null);
  group.start(BINS.agent, ['run', '--config', agentConfig], {
    cwd: site,
    env: { PATH: realPath(), HOME: site, TF_CLI_CONFIG_FILE: '', CHECKPOINT_DISABLE: '1' },
  });
  const cell = async () => {
    const r = await api('/api/matrix?site=mars-base');
    return ((await r.json()) as { cells: Cell[] }).cells.find((c) => c.component === 'app');
  };
  const journey = async (runId: string) => {
    const r = await api('/api/approvals?site=mars-base');
    return ((await r.json()) as { approvals: Journey[] }).approvals.find((j) => j.runId === runId);
  };
  const approve = async (runId: string) => {
    const a = await hubCli([
      'approve',
      '--key',
      keyFile,
      '--run',
      runId,
      '--expires',
      '2h',
      '--hub',
      url,
      '--token-file',
      adaToken,
    ]);
    expect(a.stderr).toBe('');
    expect(a.code).toBe(0);
  };
  const planFileSha = async (runId: string) =>
    ((await (await api(`/api/runs/${runId}`)).json()) as { summary: { planFileSha256?: string } }).summary
      .planFileSha256;

  const pub = await hubCli([
    'source',
    'publish',
    '--repo',
    repo,
    '--ref',
    'main',
    '--site',
    'mars-base',
    '--name',
    'infra',
    '--hub',
    url,
    '--token-file',
    ciToken,
  ]);
  expect(pub.code).toBe(0);
  const planned = await until(
    'the change to be planned at Mars',
    async () => {
      const c = await cell();
      return c?.status === 'changes' && c.commit === commit ? c : undefined;
    },
    600_000,
  );
  const runId = planned.runId as string;
  expect(await planFileSha(runId)).toMatch(/^[0-9a-f]{64}$/);

  // Control bundles the relay holds for Mars (its /metrics, read with the agent's peer token).
  const heldAtRelay = async () => {
    const r = await fetch(`http://127.0.0.1:${relayPort}/metrics`, {
      headers: { authorization: `Bearer ${agentToken}` },
    });
    const line = (await r.text())
      .split('\n')
      .find(
        (l) =>
          l.startsWith('driftline_relay_queue_depth{') &&
          l.includes('destination="mars-base"') &&
          l.includes('priority="control"'),
      );
    return Number(line?.split(' ').at(-1) ?? 0);
  };

  // The link goes down; the state moves on elsewhere; headquarters approves meanwhile.
  mars.control.force('down');
  moveStateOn(stateFile);
  const controlBefore = await heldAtRelay();
  await approve(runId);
  // The relay takes the approval from the hub and holds it for Mars. The hub does not call it delivered:
  // only the agent's own record says that (docs/decisions/300-delivery-the-agent-confirms.md).
  await until('the relay to hold the approval', async () => (await heldAtRelay()) > controlBefore);
  expect(await journey(runId)).toMatchObject({ runId, state: 'submitted', deliveredAt: null });

  // At the next contact the agent verifies and applies: the saved plan is stale. It plans again.
  mars.control.force('up');
  const failed = await until(
    'the stale apply and the plan after it',
    async () => {
      const j = await journey(runId);
      return j?.state === 'apply-failed' && j.nextRunId ? j : undefined;
    },
    600_000,
  );
  expect(failed.reason).toBe('stale-plan');
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
  const state = JSON.parse(readFileSync(stateFile, 'utf8'));
  expect(state.resources[0].instances[0].attributes.input.value).toBe('web-v5');
}

describeRealTerraform('approve at headquarters, apply at Mars', () => {
  it(
    'a stale saved plan fails to apply, the re-plan is approved again and applied, then the cell plans clean',
    {
      timeout: 900_000,
    },
    () => actLoop(),
  );
});
