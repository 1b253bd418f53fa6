import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { AGENT_MIGRATIONS } from '../src/adapters/sqlite/agentSchema.js';
import { ackFor, sqliteLedger } from './agentStorageFixtures.js';
import { roundInput as input, tempDir } from './helpers/storeFixtures.js';

/**
 * A held plan's wait is durable (docs/decisions/485-news-waits-for-its-round.md, "Since"): each held run's
 * "may wait until" is stored beside it, so a restarted agent keeps its news waiting until then and no
 * longer. An hourly cell's news waits 360 s, less than its round's confirmations (600 s): what these
 * tests see going up is the news's own deadline.
 */

const HOURLY = 3600;
const NEWS_WAIT = 360_000;

/** A store on a settable clock whose estate the hub holds, with a cron round's changed plan held at `held`. */
function heldNews() {
  const dir = tempDir();
  const clock = { now: Date.UTC(2030, 0, 1, 6) };
  const open = () => sqliteLedger(dir, { now: () => clock.now }).ledger;
  const first = open();
  first.recordMany([input(0, 0), input(0, 1)]);
  const d = first.pending()[0]!;
  first.applyAck({ ...ackFor(d.epoch, d.heads, []), readsConfirmed: true });
  const held = clock.now;
  first.recordMany([input(1, 0, 'b', HOURLY)], { moreComing: true });
  expect(first.pending()).toEqual([]);
  return { dir, clock, open, first, held };
}

describe('held news across a restart', () => {
  it('keeps waiting until its deadline after a restart, and goes with the first push after it', () => {
    const { clock, open, first, held } = heldNews();
    clock.now = held + 120_000;
    first.close();
    const again = open();
    expect(again.pending()).toEqual([]);
    clock.now = held + NEWS_WAIT - 1;
    expect(again.pending()).toEqual([]);
    again.close(); // and once more: the deadline is the stored one, not a new wait from start-up
    const third = open();
    expect(third.pending()).toEqual([]);
    clock.now = held + NEWS_WAIT;
    expect(third.pending()).toHaveLength(1);
  });

  it('sends news whose deadline passed while the agent was down with the first push', () => {
    const { clock, open, first, held } = heldNews();
    first.close();
    clock.now = held + NEWS_WAIT + 1000;
    expect(open().pending()).toHaveLength(1);
  });

  it('holds news no longer than its wait from now after the clock jumped backwards', () => {
    const { clock, open, first, held } = heldNews();
    first.close();
    clock.now = held - 3600_000;
    const again = open();
    expect(again.status().held.dueBy).toBe(clock.now + NEWS_WAIT);
    clock.now += NEWS_WAIT - 1;
    expect(again.pending()).toEqual([]);
    clock.now += 1;
    expect(again.pending()).toHaveLength(1);
  });

  it('upgrades a store from before the deadline was kept: its held news goes with the next push', () => {
    const { dir, open, first } = heldNews();
    first.close();
    // the store as the previous release left it: no deadline column, its schema version one step back
    const db = new Database(join(dir, 'agent.sqlite'));
    db.exec('ALTER TABLE held_runs DROP COLUMN wait_until');
    db.pragma(`user_version = ${AGENT_MIGRATIONS.length - 1}`);
    db.close();
    const again = open();
    expect(again.storage.heldRuns()).toEqual([expect.objectContaining({ waitUntil: null })]);
    expect(again.pending()).toHaveLength(1);
  });
});
