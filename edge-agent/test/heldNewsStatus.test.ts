import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { renderStatus } from '../src/commands/status.js';
import { ackFor, memoryLedger, sqliteLedger } from './agentStorageFixtures.js';
import { roundInput as input, tempDir } from './helpers/storeFixtures.js';

/**
 * `edge-agent status` says held news is held, and until when (docs/decisions/485-news-waits-for-its-round.md,
 * "Since"): in its text (`held news`) and in `--json` (`heldNews: { count, until }`), also when it runs
 * beside the daemon, which holds the wait: status reads the stored deadline.
 */

const HOURLY = 3600;
const NEWS_WAIT = 360_000;
type Recorder = Pick<ReturnType<typeof memoryLedger>['ledger'], 'recordMany' | 'pending' | 'applyAck'>;

/** Two cells the hub holds, then a cron round's changed plan of the first held (more of the round coming). */
function holdNews(ledger: Recorder) {
  ledger.recordMany([input(0, 0), input(0, 1)]);
  const d = ledger.pending()[0]!;
  ledger.applyAck({ ...ackFor(d.epoch, d.heads, []), readsConfirmed: true });
  ledger.recordMany([input(1, 0, 'b', HOURLY)], { moreComing: true });
}

describe('edge-agent status and held news', () => {
  it('shows held news as held, with when it goes, and as due once it is', () => {
    let now = Date.UTC(2030, 0, 1, 6);
    const { ledger } = memoryLedger({ now: () => now });
    expect(ledger.status().heldNews).toEqual({ count: 0, until: null });
    expect(renderStatus(ledger.status())).not.toContain('held news');
    const heldAt = now;
    holdNews(ledger);
    const s = ledger.status();
    expect(s.heldNews).toEqual({ count: 1, until: heldAt + NEWS_WAIT });
    expect(s.held).toEqual({ cells: 1, runs: 1, since: heldAt, dueBy: heldAt + NEWS_WAIT });
    expect(renderStatus(s)).toContain(
      `held news      1 result(s), held until ${new Date(heldAt + NEWS_WAIT).toISOString()} (its round)\n`,
    );
    // a changed plan no schedule ran is due at once, and what is held goes with it
    now += 1000;
    ledger.recordMany([input(1, 1, 'b')], { moreComing: true });
    const due = ledger.status();
    expect(due.heldNews).toEqual({ count: 2, until: now });
    expect(renderStatus({ ...due, heldNews: { count: 2, until: Date.now() - 1 } })).toContain(
      'held news      2 result(s), due: they go with the next push\n',
    );
  });

  it('reads the wait the daemon holds: a status opened beside it shows the held news until its deadline', () => {
    const dir = tempDir();
    const now = Date.UTC(2030, 0, 1, 6);
    const daemon = sqliteLedger(dir, { now: () => now }).ledger;
    holdNews(daemon);
    const status = sqliteLedger(dir, { now: () => now + 60_000 }).ledger.status();
    expect(status.heldNews).toEqual({ count: 1, until: now + NEWS_WAIT });
    expect(status.held.dueBy).toBe(now + NEWS_WAIT);
  });

  it('`edge-agent status` prints held news with its deadline, in text and in --json', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'hub.pub'), 'ed25519:AAAA\n');
    writeFileSync(join(dir, 'token'), 'x\n');
    mkdirSync(join(dir, 'infra'));
    const config = join(dir, 'agent.yaml');
    writeFileSync(
      config,
      `site: ship-7
agent: a1
dataDir: ./data
hubPublicKeyFile: ./hub.pub
upstreams: [{ url: "http://127.0.0.1:1", tokenFile: ./token }]
components:
  - name: network
    workingDir: ./infra
    environments: [prod]
`,
    );
    mkdirSync(join(dir, 'data'));
    const heldAt = Date.now();
    const daemon = sqliteLedger(join(dir, 'data'), { now: () => heldAt }).ledger;
    holdNews(daemon); // the daemon keeps its store open
    const bin = fileURLToPath(new URL('../bin/edge-agent.js', import.meta.url));
    const cli = (args: string[]) =>
      spawnSync(process.execPath, [bin, 'status', '--config', config, ...args], {
        encoding: 'utf8',
        env: { ...process.env, LOG_LEVEL: 'silent' },
        timeout: 60_000,
      });
    const json = cli(['--json']);
    expect(json.status, json.stderr).toBe(0);
    const s = JSON.parse(json.stdout) as { heldNews: unknown; held: { runs: number } };
    expect(s.heldNews).toEqual({ count: 1, until: heldAt + NEWS_WAIT });
    expect(s.held.runs).toBe(1);
    const text = cli([]);
    expect(text.status, text.stderr).toBe(0);
    expect(text.stdout).toContain(
      `held news      1 result(s), held until ${new Date(heldAt + NEWS_WAIT).toISOString()} (its round)`,
    );
  });
});
