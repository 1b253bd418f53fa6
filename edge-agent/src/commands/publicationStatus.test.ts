import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import {
  readPublicationEntries,
  SqlitePublicationLedger,
} from '../adapters/publications/SqlitePublicationLedger.js';
import type { PublicationEntry } from '../core/publications/ports.js';
import { progressBar, readPublications, renderPublications } from './publicationStatus.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const entry = (over: Partial<PublicationEntry>): PublicationEntry => ({
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

describe('edge-agent status: publications', () => {
  it('reads the offset from the partial file when it is ahead of the last recorded chunk', () => {
    const dir = mkdtempSync(join(tmpdir(), 'publication-status-'));
    dirs.push(dir);
    const db = new Database(join(dir, 'agent.sqlite'));
    const ledger = new SqlitePublicationLedger(db);
    ledger.put(entry({}));
    ledger.put(
      entry({ bundleId: 'b2', sha256: 'b'.repeat(64), name: 'tool', state: 'refused', reason: 'kind' }),
    );
    mkdirSync(join(dir, 'bundles-partial'));
    writeFileSync(join(dir, 'bundles-partial', 'a'.repeat(64)), Buffer.alloc(2 * 1024 * 1024));
    const list = readPublications(readPublicationEntries(db), dir);
    db.close();
    expect(list.map((p) => [p.publicationId, p.state, p.offset])).toEqual([
      ['b1', 'downloading', 2 * 1024 * 1024],
      ['b2', 'refused', 1024 * 1024],
    ]);
  });

  it('answers no publications for a store that never received one', () => {
    const dir = mkdtempSync(join(tmpdir(), 'publication-status-'));
    dirs.push(dir);
    const db = new Database(join(dir, 'agent.sqlite'));
    expect(readPublications(readPublicationEntries(db), dir)).toEqual([]);
    db.close();
  });

  it('shows a progress bar on a terminal and plain figures in logs', () => {
    const row = (over: Partial<PublicationEntry>, offset: number, reason: string | null) => {
      const { bundleId, name, fileKind, state, size } = entry(over);
      return { publicationId: bundleId, name, fileKind, state, size, offset, reason };
    };
    const list = [
      row({}, 2 * 1024 * 1024, null),
      row({ bundleId: 'b2', name: 'tool', state: 'refused' }, 0, "kind 'image'"),
      row({ bundleId: 'b3', name: 'm2', state: 'placed' }, 8 * 1024 * 1024, null),
    ];
    const tty = renderPublications(list, true);
    expect(tty).toContain('1 in progress; 1 refused, 1 placed');
    expect(tty).toContain('[######------------------] 2.0 MiB of 8.0 MiB (25%)');
    expect(tty).toContain("tool refused: kind 'image'");
    const plain = renderPublications(list, false);
    expect(plain).toContain('downloading  2.0 MiB of 8.0 MiB (25%)');
    expect(plain).not.toContain('[#');
    expect(progressBar(0, 0, 4)).toBe('[####]');
  });
});
