import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import {
  type ApprovalClaims,
  type DocApply,
  encodeUlid,
  generateSigningKeyPair,
  publicKeyFromText,
  publicKeyToText,
  type SigningKeyPair,
  signApproval,
} from '@driftline/protocol';
import pino from 'pino';
import { initAgentKey } from '../../src/adapters/fs/agentKeys.js';
import { CliGitMirror } from '../../src/adapters/git/CliGitMirror.js';
import { type RunningAgent, startAgent } from '../../src/app.js';
import { parseConfig } from '../../src/config.js';
import { readDoc } from '../../src/core/doc/agentDoc.js';
import { realPath } from '../terraform/tools.js';
import { tempDir } from './storeFixtures.js';
import { TestHub } from './testHub.js';

export const FAKE_BIN = resolve(import.meta.dirname, '../../../simulation/bin');

/** Waits for `f` to give a truthy value, polling, up to `ms` (a bound, not a test timing). */
export async function until<T>(
  what: string,
  f: () => T | undefined | Promise<T | undefined>,
  ms = 60_000,
): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.email=hq@example.org', '-c', 'user.name=hq', ...args], {
    cwd,
    encoding: 'utf8',
  }).trim();

/** A scenario for the fake terraform: the states its plans go through, one run each (the last repeats). */
export const scenario = (...states: string[]) =>
  `seed: 5\nloop: false\nsteps:\n${states.map((s) => `  - ${s.startsWith('{') ? s : `{ state: ${s} }`}`).join('\n')}\n`;

export interface ApplyHarness {
  dir: string;
  hub: TestHub;
  agent: RunningAgent;
  approverA: SigningKeyPair;
  approverB: SigningKeyPair;
  keyA: string;
  keyB: string;
  /** Moves the agent's clock (ms added to the real time). */
  skew: { ms: number };
  /** The commit the `edge` component's repository has on main. */
  edgeCommit: string;
  close(): Promise<void>;
}

/** Components: each a cell with its own fake-terraform scenario and `apply` settings (`{A}`, `{B}` are keys). */
export interface HarnessComponent {
  name: string;
  scenario: string;
  /** YAML of the component's `apply` block, `{A}`/`{B}` replaced by the approvers' keys; absent: off. */
  apply?: string;
  /** A component whose code comes from the `infra` repository (its scenario is committed there). */
  source?: boolean;
  /**
   * Files of the component's working directory besides its scenario (`main.tf` for the real terraform);
   * with `git`, the directory is a git checkout with them committed on main.
   */
  files?: Record<string, string>;
  git?: boolean;
}

/** Which terraform the agent runs: the simulation's fake (default) or the real binary on PATH. */
export interface HarnessOptions {
  terraform?: 'fake' | 'real';
}

/**
 * An agent started as `edge-agent run` starts it (startAgent), with the fake terraform on PATH, a test hub
 * as its upstream (the downlink carries hub-signed approvals) and two approver keys.
 */
export async function startApplyAgent(
  components: HarnessComponent[],
  opts: HarnessOptions = {},
): Promise<ApplyHarness> {
  const dir = tempDir('driftline-apply-');
  const dataDir = join(dir, 'data');
  const { publicKey } = await initAgentKey(dataDir);
  const hub = await TestHub.start(await publicKeyFromText(publicKey));
  writeFileSync(join(dir, 'hub.pub'), `${await publicKeyToText(hub.keys.publicKey)}\n`);
  writeFileSync(join(dir, 'token'), 'agent-token\n');
  const [approverA, approverB] = await Promise.all([generateSigningKeyPair(), generateSigningKeyPair()]);
  const keyA = await publicKeyToText(approverA.publicKey);
  const keyB = await publicKeyToText(approverB.publicKey);

  let edgeCommit = '';
  const sourced = components.filter((c) => c.source);
  if (sourced.length > 0) {
    const src = join(dir, 'src');
    for (const c of sourced) {
      mkdirSync(join(src, 'stacks', c.name), { recursive: true });
      writeFileSync(join(src, 'stacks', c.name, 'main.tf'), `# ${c.name}\n`);
      writeFileSync(join(src, 'stacks', c.name, 'fake-terraform.yaml'), c.scenario);
    }
    git(src, 'init', '-q', '-b', 'main');
    git(src, 'add', '.');
    git(src, 'commit', '-qm', 'main');
    edgeCommit = git(src, 'rev-parse', 'HEAD');
    git(src, 'bundle', 'create', join(dir, 'infra.bundle'), 'main');
    await new CliGitMirror(join(dataDir, 'git')).apply('infra', join(dir, 'infra.bundle'));
  }
  const yaml = components
    .map((c) => {
      if (!c.source) {
        mkdirSync(join(dir, c.name));
        writeFileSync(join(dir, c.name, 'fake-terraform.yaml'), c.scenario);
        for (const [name, text] of Object.entries(c.files ?? {}))
          writeFileSync(join(dir, c.name, name), text);
        if (c.git) {
          git(join(dir, c.name), 'init', '-q', '-b', 'main');
          git(join(dir, c.name), 'add', '.');
          git(join(dir, c.name), 'commit', '-qm', c.name);
        }
      }
      const where = c.source
        ? `source: { repo: infra, path: stacks/${c.name}, refs: [main, "pr/*"] }\n    env: { FAKE_TERRAFORM_STATE_DIR: "${join(dir, 'fake-state', c.name)}" }`
        : `workingDir: ./${c.name}`;
      const apply = c.apply ? `\n    apply: ${c.apply.replaceAll('{A}', keyA).replaceAll('{B}', keyB)}` : '';
      return `  - name: ${c.name}\n    ${where}\n    environments: [prod]${apply}`;
    })
    .join('\n');
  const text = `site: ship-7
agent: a1
dataDir: ./data
hubPublicKeyFile: ./hub.pub
upstreams: [{ url: "${hub.url}", tokenFile: ./token }]
components:
${yaml}
sync: { intervalS: 1, jitterS: 0 }
`;
  const parsed = parseConfig(text, dir);
  if (!parsed.ok) throw new Error(parsed.problems.join('\n'));
  const skew = { ms: 0 };
  const agent = await startAgent(parsed.config, {
    log: pino({ level: 'silent' }),
    schedule: false,
    now: () => Date.now() + skew.ms,
    // The real binary finds no CLI configuration of the machine's (HOME is the test's) and sends nothing.
    toolEnv:
      opts.terraform === 'real'
        ? { PATH: realPath(), HOME: dir, CHECKPOINT_DISABLE: '1', TF_IN_AUTOMATION: '1' }
        : { PATH: `${FAKE_BIN}:${process.env.PATH}`, HOME: dir, FAKE_TERRAFORM_NETWORK: '1' },
  });
  return {
    dir,
    hub,
    agent,
    approverA,
    approverB,
    keyA,
    keyB,
    skew,
    edgeCommit,
    close: async () => {
      await agent.stop();
      await hub.close();
    },
  };
}

/** The latest run of a component's prod cell, from the agent's store. */
export function latestRun(h: ApplyHarness, component: string): string | undefined {
  return h.agent.storage.cellRuns('prod', component, null, 1)[0]?.runId;
}

/**
 * Plans the component's prod cell now and returns the run's id once it is recorded and its saved plan
 * kept or discarded (the agent does that just after the commit: no `pending-*` plan file is left).
 */
export async function planNow(h: ApplyHarness, component: string): Promise<string> {
  const before = latestRun(h, component) ?? '';
  h.agent.trigger({ component, environment: 'prod' }, 'manual');
  const runId = await until(`a plan of ${component}`, () => {
    const r = latestRun(h, component);
    return r && r > before ? r : undefined;
  });
  const plans = join(h.dir, 'data', 'plans');
  await until(`the saved plan of ${runId} kept`, () =>
    !existsSync(plans) || readdirSync(plans).every((f) => !f.startsWith('pending-')) ? true : undefined,
  );
  return runId;
}

/** The agent's current document, as plain data. */
export function doc(h: ApplyHarness) {
  return readDoc(h.agent.store.loadEpoch(h.agent.store.status().epoch));
}

let approvalSeq = 0;
/** A fresh approval id (a ULID). */
export function approvalId(): string {
  approvalSeq++;
  const r = new Uint8Array(10);
  new DataView(r.buffer).setUint32(6, approvalSeq);
  crypto.getRandomValues(r.subarray(0, 6));
  return encodeUlid(Date.now(), r);
}

/** Claims approving `runId` as the agent recorded it (its plan file hash), valid for an hour. */
export function claimsFor(
  h: ApplyHarness,
  runId: string,
  over: Partial<ApprovalClaims> = {},
): ApprovalClaims {
  const run = doc(h).runs[runId];
  if (!run) throw new Error(`no run ${runId} in the document`);
  const now = Date.now();
  return {
    v: 1,
    approvalId: approvalId(),
    site: 'ship-7' as ApprovalClaims['site'],
    environment: run.environment,
    component: run.component,
    ref: run.summary.ref ?? 'main',
    commit: run.summary.git?.commit ?? 'c'.repeat(40),
    runId: runId as ApprovalClaims['runId'],
    planFileSha256: (run.summary.planFileSha256 ?? '0'.repeat(64)) as ApprovalClaims['planFileSha256'],
    approvedAt: now,
    expiresAt: now + 3600_000,
    ...over,
  };
}

/** Signs `claims` with `approver`'s key and relays it through the test hub's downlink. */
export async function approve(
  h: ApplyHarness,
  claims: ApprovalClaims,
  approver = h.approverA,
): Promise<void> {
  await h.hub.queueApproval(await signApproval(claims, approver.privateKey, approver.publicKey));
  h.agent.loop.kick();
}

/** The agent's record of `runId`'s approvals once `pred` holds for it. */
export function settles(h: ApplyHarness, runId: string, pred: (a: DocApply) => boolean): Promise<DocApply> {
  return until(`the approval of ${runId} to settle`, () => {
    const a = h.agent.store.applyRecord(runId)?.apply;
    return a && pred(a) ? a : undefined;
  });
}

/** The fake terraform's state serial for a component (how many applies changed its state). */
export function serial(h: ApplyHarness, component: string, source = false): number {
  const file = source
    ? join(h.dir, 'fake-state', component, 'state.json')
    : join(h.dir, component, '.fake-terraform', 'state.json');
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as { serial: number }).serial : 0;
}

/**
 * Returns once everything queued on the downlink before now was handled: an approval of the `dns` cell
 * (no apply there) is queued after it, and its refusal recorded.
 */
export async function handled(h: ApplyHarness): Promise<void> {
  const marker = doc(h).cells['prod/dns']?.runId ?? (await planNow(h, 'dns'));
  const before = h.agent.store.applyRecord(marker)?.apply.updatedAt;
  await approve(h, claimsFor(h, marker));
  await settles(h, marker, (x) => x.state === 'refused' && x.updatedAt !== before);
}
