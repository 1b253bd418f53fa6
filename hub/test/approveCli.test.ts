import { spawn } from 'node:child_process';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  ApprovalsResponseSchema,
  importPrivateKeyPem,
  parseCliDuration as parseDuration,
  publicKeyOf,
  publicKeyToText,
} from '@driftline/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { applySite, approvalsOnDownlink, PLAN_FILE, planWithFile } from './applySim.js';
import { startHub, type TestHub } from './hubFixture.js';
import { addTestUser } from './users.js';

const bin = fileURLToPath(new URL('../bin/hub.js', import.meta.url));

/** `hub …` as a real process; the hub under test runs in this process, so the child is awaited. */
function hub(args: string[]) {
  const child = spawn(process.execPath, [bin, ...args], {
    env: { ...process.env, DRIFTLINE_HUB_URL: '', DRIFTLINE_TOKEN_FILE: '' },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => {
    stdout += d;
  });
  child.stderr.on('data', (d) => {
    stderr += d;
  });
  return new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) =>
    child.on('close', (status) => resolve({ status, stdout, stderr })),
  );
}

const hubs: TestHub[] = [];
afterEach(async () => {
  for (const h of hubs.splice(0)) await h.close();
});

describe('hub approver and hub approve (as processes)', { timeout: 120_000 }, () => {
  it('makes a key, names its holder, and approves a run: 201 and the control bundle on the downlink', async () => {
    const h = await startHub();
    hubs.push(h);
    h.clock.t = Date.now(); // the approval is signed on this machine's clock
    const sim = await applySite(h);
    const runId = await planWithFile(h, sim);
    const cfg = join(h.dir, 'hub.yaml');
    writeFileSync(cfg, `dataDir: ${h.dir}\n`);
    const pem = join(h.dir, 'approver.pem');

    const made = await hub(['approver', 'keygen', '--out', pem, '--json']);
    expect(made.status).toBe(0);
    const { key } = JSON.parse(made.stdout) as { key: string };
    expect(statSync(pem).mode & 0o777).toBe(0o600);
    expect(
      await publicKeyToText(await publicKeyOf(await importPrivateKeyPem(readFileSync(pem, 'utf8')))),
    ).toBe(key);
    expect((await hub(['approver', 'keygen', '--out', pem])).status).toBe(1);

    expect((await hub(['approver', 'add', 'Ada Lovelace', '--key', key, '-c', cfg])).status).toBe(0);
    expect((await hub(['approver', 'add', 'ada', '--key', 'ed25519:short', '-c', cfg])).status).toBe(2);
    const listed = JSON.parse((await hub(['approver', 'list', '--json', '-c', cfg])).stdout);
    expect(listed.approvers).toMatchObject([{ name: 'Ada Lovelace', key }]);

    const token = join(h.dir, 'approver.token');
    writeFileSync(token, `${(await addTestUser(h.hub.store, 'ada', ['approver'])).token}\n`);
    const remote = ['--hub', h.url, '--token-file', token];
    const approved = await hub([
      'approve',
      '--key',
      pem,
      '--run',
      runId,
      '--expires',
      '2h',
      '--json',
      ...remote,
    ]);
    expect(approved.stderr).toBe('');
    expect(approved.status).toBe(0);
    const journey = JSON.parse(approved.stdout);
    expect(journey).toMatchObject({ runId, state: 'submitted', approverName: 'Ada Lovelace', approver: key });
    expect(Date.parse(journey.expiresAt) - Date.parse(journey.approvedAt)).toBe(2 * 3_600_000);

    const [queued, ...rest] = await approvalsOnDownlink(h);
    expect(rest).toEqual([]);
    expect(queued?.priority).toBe('control');
    expect(queued?.approval.claims).toMatchObject({ runId, planFileSha256: PLAN_FILE, site: 'mars-1' });
    const res = await fetch(`${h.url}/api/approvals?site=mars-1`, {
      headers: { authorization: `Bearer ${readFileSync(token, 'utf8').trim()}` },
    });
    expect(ApprovalsResponseSchema.parse(await res.json()).approvals.map((a) => a.state)).toEqual([
      'delivered',
    ]);

    expect((await hub(['approver', 'remove', 'Ada Lovelace', '-c', cfg])).status).toBe(0);
    expect((await hub(['approver', 'remove', 'Ada Lovelace', '-c', cfg])).status).toBe(1);
    // Renaming a key to a trusted person's name leaves a trace: every add and remove is audited.
    expect((await hub(['approver', 'add', 'Grace', '--key', key, '-c', cfg])).status).toBe(0);
    expect((await hub(['approver', 'add', 'Mallory', '--key', key, '-c', cfg])).status).toBe(1);
    const audit = (await h.hub.store.listAudit({ limit: 20 }))
      .filter((e) => e.action.startsWith('approver.'))
      .map((e) => [e.action, e.target, e.outcome, e.detail, e.actor]);
    expect(audit.reverse()).toEqual([
      ['approver.add', 'Ada Lovelace', 'ok', `key ${key}`, 'cli'],
      ['approver.remove', 'Ada Lovelace', 'ok', `key ${key}`, 'cli'],
      ['approver.add', 'Grace', 'ok', `key ${key}`, 'cli'],
      ['approver.add', 'Mallory', 'failed', `key ${key} is already Grace's`, 'cli'],
    ]);
  });

  it('says why it cannot approve: no plan file, a viewer token, a bad duration', async () => {
    const h = await startHub();
    hubs.push(h);
    h.clock.t = Date.now();
    const sim = await applySite(h);
    const plain = await planWithFile(h, sim, { planFileSha256: null });
    const pem = join(h.dir, 'approver.pem');
    expect((await hub(['approver', 'keygen', '--out', pem])).status).toBe(0);
    const token = join(h.dir, 'viewer.token');
    writeFileSync(token, (await addTestUser(h.hub.store, 'vic', ['viewer'])).token);
    const remote = ['--hub', h.url, '--token-file', token];
    const noFile = await hub(['approve', '--key', pem, '--run', plain, ...remote]);
    expect([noFile.status, noFile.stderr]).toEqual([2, expect.stringMatching(/kept no saved plan file/)]);
    const withFile = await planWithFile(h, sim);
    const viewer = await hub(['approve', '--key', pem, '--run', withFile, ...remote]);
    expect(viewer.status).toBe(2);
    expect(viewer.stderr).toMatch(/403 .*lacks the role/);
    const bad = await hub(['approve', '--key', pem, '--run', withFile, '--expires', 'soon', ...remote]);
    expect([bad.status, bad.stderr]).toEqual([2, expect.stringMatching(/--expires soon: a duration/)]);
    // a run a later plan superseded: the hub says so, and nothing travels (issue 42)
    const approverToken = join(h.dir, 'approver.token');
    writeFileSync(approverToken, (await addTestUser(h.hub.store, 'ada', ['approver'])).token);
    const key = JSON.parse((await hub(['approver', 'keygen', '--out', `${pem}.2`, '--json'])).stdout).key;
    const cfg = join(h.dir, 'hub.yaml');
    writeFileSync(cfg, `dataDir: ${h.dir}\n`);
    expect((await hub(['approver', 'add', 'Ada', '--key', key, '-c', cfg])).status).toBe(0);
    h.clock.t += 1000;
    const later = await planWithFile(h, sim, { planFileSha256: 'f'.repeat(64) });
    const superseded = await hub([
      'approve',
      '--key',
      `${pem}.2`,
      '--run',
      withFile,
      ...['--hub', h.url, '--token-file', approverToken],
    ]);
    expect(superseded.status).toBe(2);
    expect(superseded.stderr).toMatch(new RegExp(`approval refused: superseded by run '${later}'`));
    expect(await approvalsOnDownlink(h)).toEqual([]);
  });

  it('reads durations', () => {
    expect([parseDuration('24h'), parseDuration('30m'), parseDuration('2d'), parseDuration('90')]).toEqual([
      86_400_000, 1_800_000, 172_800_000, 90_000,
    ]);
    expect([parseDuration('0'), parseDuration('1w'), parseDuration('')]).toEqual([null, null, null]);
  });
});
