import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { readBundleEntries, SqliteBundleLedger } from '../adapters/bundles/SqliteBundleLedger.js';
import type { BundleEntry } from '../core/bundles/ports.js';
import { progressBar, readBundles, renderBundles } from './bundleStatus.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const entry = (over: Partial<BundleEntry>): BundleEntry => ({
  bundleId: 'b1',
  sha256: 'a'.repeat(64),
  name: 'aws-5.80.zip',
  fileKind: 'provider-mirror',
  size: 8 * 1024 * 1024,
  state: 'downloading',
  bytes: 1024 * 1024,
  updatedAt: 1,
  expiresAt: null,
  ...over,
});

describe('edge-agent status: bundles', () => {
  it('reads the offset from the partial file when it is ahead of the last recorded chunk', () => {
    const dir = mkdtempSync(join(tmpdir(), 'bundle-status-'));
    dirs.push(dir);
    const db = new Database(join(dir, 'agent.sqlite'));
    const ledger = new SqliteBundleLedger(db);
    ledger.put(entry({}));
    ledger.put(
      entry({ bundleId: 'b2', sha256: 'b'.repeat(64), name: 'tool', state: 'refused', reason: 'kind' }),
    );
    mkdirSync(join(dir, 'bundles-partial'));
    writeFileSync(join(dir, 'bundles-partial', 'a'.repeat(64)), Buffer.alloc(2 * 1024 * 1024));
    const list = readBundles(readBundleEntries(db), dir);
    db.close();
    expect(list.map((b) => [b.bundleId, b.state, b.offset])).toEqual([
      ['b1', 'downloading', 2 * 1024 * 1024],
      ['b2', 'refused', 1024 * 1024],
    ]);
  });

  it('answers no bundles for a store that never received one', () => {
    const dir = mkdtempSync(join(tmpdir(), 'bundle-status-'));
    dirs.push(dir);
    const db = new Database(join(dir, 'agent.sqlite'));
    expect(readBundles(readBundleEntries(db), dir)).toEqual([]);
    db.close();
  });

  it('shows a progress bar on a terminal and plain figures in logs', () => {
    const list = [
      { ...entry({}), offset: 2 * 1024 * 1024, reason: null },
      { ...entry({ bundleId: 'b2', name: 'tool', state: 'refused' }), offset: 0, reason: "kind 'image'" },
      { ...entry({ bundleId: 'b3', name: 'm2', state: 'placed' }), offset: 8 * 1024 * 1024, reason: null },
    ];
    const tty = renderBundles(list, true);
    expect(tty).toContain('1 in progress; 1 refused, 1 placed');
    expect(tty).toContain('[######------------------] 2.0 MiB of 8.0 MiB (25%)');
    expect(tty).toContain("tool refused: kind 'image'");
    const plain = renderBundles(list, false);
    expect(plain).toContain('downloading  2.0 MiB of 8.0 MiB (25%)');
    expect(plain).not.toContain('[#');
    expect(progressBar(0, 0, 4)).toBe('[####]');
  });
});
