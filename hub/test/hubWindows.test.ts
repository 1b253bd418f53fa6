import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeBundle, decodePayload, generateSigningKeyPair, verifyBundle } from '@driftline/protocol';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SqliteHubStore } from '../src/adapters/sqlite/SqliteHubStore.js';
import { HubWindows } from '../src/core/contact/HubWindows.js';
import type { AgentRow } from '../src/ports/HubStore.js';
import { ulidGen } from '../src/ports/IdGen.js';
import { TestClock } from './agentSim.js';

const POLAR = 'every 4m for 40s from 2026-11-27T00:00:00Z';
const MIN = 60_000;

function agent(site: string, over: Partial<AgentRow> = {}): AgentRow {
  return {
    site,
    agent: 'a1',
    publicKey: 'ed25519:x',
    enrolledAt: 1,
    revokedAt: null,
    version: null,
    lastContactAt: null,
    queueDepth: null,
    oldestUnsentAt: null,
    clockOffsetMs: null,
    offsetSampledAt: null,
    upstream: null,
    cadenceS: { 'prod/net': 40 },
    contactIntervalS: 120,
    contactWindows: [],
    readsHubWindows: true,
    ...over,
  };
}

/** Windows declared at the hub go down, signed, until the agent holds them (docs/decisions/590-windows-declared-once.md). */
describe('the hub sends the windows it declares for a site to its agents (real SQLite)', () => {
  let dir: string;
  let store: SqliteHubStore;
  let clock: TestClock;
  let keys: Awaited<ReturnType<typeof generateSigningKeyPair>>;
  const windows = (sites: Record<string, string[]>) =>
    new HubWindows({ store, clock, ids: ulidGen(clock), hubPrivateKey: keys.privateKey, sites });

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'hub-windows-'));
    store = new SqliteHubStore(join(dir, 'hub.db'));
    clock = new TestClock();
    keys = await generateSigningKeyPair();
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function sentTo(site: string) {
    const rows = await store.readDownlink(site, 0, 100);
    const out = [];
    for (const r of rows) {
      const d = decodeBundle(r.bytes);
      if (!d.ok) throw new Error(d.error.message);
      expect(await verifyBundle(d.value, keys.publicKey)).toBe(true);
      const p = decodePayload('control', d.value.payload);
      if (!p.ok || p.value.type !== 'contact-windows') continue;
      out.push(p.value);
    }
    return out;
  }

  it('sends them signed to an agent that reads them, once, then again only after three contact intervals', async () => {
    await store.commit({ agents: [agent('polar-1'), agent('ship-2', { readsHubWindows: false })] });
    const w = windows({ 'polar-1': [POLAR], 'ship-2': [POLAR] });
    expect(await w.sendDue()).toEqual([{ site: 'polar-1', agent: 'a1', windows: [POLAR], again: false }]);
    const [sent] = await sentTo('polar-1');
    expect(sent).toMatchObject({ site: 'polar-1', agent: 'a1', windows: [POLAR], declaredAt: clock.now() });
    // an agent that does not read them (an older one) is never sent what it would refuse
    expect(await sentTo('ship-2')).toEqual([]);

    clock.advance(5 * MIN);
    expect(await w.sendDue()).toEqual([]);
    clock.advance(11 * MIN); // 3 × 120 s is under the 15-minute floor
    expect(await w.sendDue()).toEqual([expect.objectContaining({ site: 'polar-1', again: true })]);
    // the newer copy replaced the undelivered one: one row per agent on the downlink
    expect(await sentTo('polar-1')).toHaveLength(1);
  });

  it('stops once the agent says it holds them, and withdraws them when the config no longer declares any', async () => {
    await store.commit({ agents: [agent('polar-1', { hubWindows: [POLAR] })] });
    expect(await windows({ 'polar-1': [POLAR] }).sendDue()).toEqual([]);
    const withdrawn = await windows({}).sendDue();
    expect(withdrawn).toEqual([{ site: 'polar-1', agent: 'a1', windows: [], again: false }]);
    expect((await sentTo('polar-1'))[0]?.windows).toEqual([]);
    // a revoked agent is sent nothing
    await store.commit({ agents: [agent('polar-1', { revokedAt: clock.now() })] });
    expect(await windows({ 'polar-1': [POLAR, '0 2 * * * for 30m'] }).sendDue()).toEqual([]);
  });

  it('sends a changed list at once, whatever it sent a minute before', async () => {
    await store.commit({ agents: [agent('polar-1')] });
    const sites: Record<string, string[]> = { 'polar-1': [POLAR] };
    const w = windows(sites);
    await w.sendDue();
    clock.advance(MIN);
    sites['polar-1'] = ['0 2 * * * for 30m tz Europe/Berlin'];
    expect(await w.sendDue()).toEqual([
      { site: 'polar-1', agent: 'a1', windows: ['0 2 * * * for 30m tz Europe/Berlin'], again: false },
    ]);
    const [latest] = await sentTo('polar-1');
    expect(latest?.windows).toEqual(['0 2 * * * for 30m tz Europe/Berlin']);
  });
});
