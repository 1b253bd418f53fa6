import { join } from 'node:path';
import * as A from '@automerge/automerge';
import type { AckPayload } from '@driftline/protocol';
import { afterEach } from 'vitest';
import { MemoryAgentStorage } from '../src/adapters/memory/MemoryAgentStorage.js';
import { openSqliteLedger, type SqliteLedgerOptions } from '../src/adapters/sqlite/openSqliteLedger.js';
import { AgentLedger, type AgentLedgerOptions } from '../src/core/ledger/AgentLedger.js';
import { tempDir } from './helpers/storeFixtures.js';

/** Ledgers opened by a test, closed after it. */
const open: AgentLedger[] = [];
afterEach(() => {
  for (const s of open.splice(0)) {
    try {
      s.close();
    } catch {}
  }
});

/** The agent's ledger over memory storage (the ledger's own tests: its decisions, not a file's). */
export function memoryLedger(over: Partial<AgentLedgerOptions> = {}) {
  const storage = new MemoryAgentStorage();
  const ledger = new AgentLedger(storage, { site: 'ship-7', agent: 'a1', ...over });
  open.push(ledger);
  return { ledger, storage };
}

/** The agent's ledger over `<dir>/agent.sqlite`. */
export function sqliteLedger(dir = tempDir(), over: Partial<SqliteLedgerOptions> = {}) {
  const opened = openSqliteLedger({ path: join(dir, 'agent.sqlite'), site: 'ship-7', agent: 'a1', ...over });
  open.push(opened.ledger);
  return opened;
}

/** What a hub does with deltas: apply to a replica, in any order, any number of times. */
export function hubApply(replica: A.Doc<unknown>, changes: Uint8Array): A.Doc<unknown> {
  return A.loadIncremental(replica, changes);
}

/** A hub ack of `heads` of epoch `epoch` (and of `blobs`). */
export function ackFor(epoch: number, heads: string[], blobs: string[] = []): AckPayload {
  return { agent: 'a1', doc: `ship-7/a1/epoch-${epoch}`, heads, blobs, committedAt: 0 } as never;
}
