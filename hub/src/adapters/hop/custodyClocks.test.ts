import type { SourceClocks } from '@driftline/hop';
import { makeBundle } from '@driftline/hop/testing';
import {
  bundleRef,
  formatStamp,
  generateSigningKeyPair,
  parseStamp,
  publicKeyToText,
  signBytes,
  signCustodyRecord,
  stampBytes,
} from '@driftline/protocol';
import { describe, expect, it } from 'vitest';
import type { PeerRow } from '../../ports/HubStore.js';
import type { AgentRow } from '../../ports/hubRows.js';
import { type ChainEvent, CustodyClocks } from './custodyClocks.js';

const T = 1_800_000_000_000;

async function setUp() {
  const agent = await generateSigningKeyPair();
  const relay = await generateSigningKeyPair();
  const relayKey = await publicKeyToText(relay.publicKey);
  const events: ChainEvent[] = [];
  const clocks = new CustodyClocks({
    listPeers: async () => [
      { name: 'relay-1', sites: ['ship-7'], tokenSha256: 'x', publicKey: relayKey } as PeerRow,
    ],
    getAgent: async (site, a) =>
      site === 'ship-7' && a === 'a1'
        ? ({ site, agent: a, publicKey: await publicKeyToText(agent.publicKey) } as AgentRow)
        : null,
    now: () => T,
    onChain: (e) => events.push(e),
  });
  const bundle = await makeBundle(); // ship-7/a1
  // the agent's exchange with relay-1: same clocks, 10 ms each way
  const [t0, t1, t2, t3] = [T, T + 10, T + 12, T + 22];
  const stamp = parseStamp(formatStamp(relayKey, await signBytes(relay.privateKey, stampBytes(t0, t1, t2))));
  if (!stamp) throw new Error('no stamp');
  const record = await signCustodyRecord(
    {
      v: 1,
      role: 'agent',
      signer: 'ship-7/a1',
      at: T + 22,
      up: { t: [t0, t1, t2, t3], ...stamp },
      bundles: [await bundleRef(bundle.bytes)],
    },
    (d) => signBytes(agent.privateKey, d),
  );
  return { clocks, events, bundle, record, relayKey, agent };
}

const plain =
  (offsetMs: number): SourceClocks =>
  (s) =>
    s === 'ship-7/a1' ? { offsetMs, uncertaintyMs: 0 } : null;
const peerClock = { offsetMs: 5, uncertaintyMs: 3 };

describe('CustodyClocks (decision 290)', () => {
  it('takes the signed estimate over a plain one that lies, and counts the lie', async () => {
    const { clocks, events, bundle, record, relayKey } = await setUp();
    const c = await clocks.of({ name: 'relay-1', publicKey: relayKey }, [bundle.bytes], plain(20_000), {
      records: [record],
      peerClock,
    });
    // agent − relay-1 is 0 ± 10, relay-1 − hub 5 ± 3
    expect(c?.('ship-7/a1')).toEqual({ offsetMs: 5, uncertaintyMs: 13 });
    expect(events).toMatchObject([{ outcome: 'contradicts-signed', source: 'ship-7/a1', peer: 'relay-1' }]);
    // an honest plain estimate agrees: counted as signed, nothing to log
    events.length = 0;
    await clocks.of({ name: 'relay-1', publicKey: relayKey }, [bundle.bytes], plain(8), {
      records: [record],
      peerClock,
    });
    expect(events).toMatchObject([{ outcome: 'signed' }]);
  });

  it('sets no estimate from a refused chain, keeps the plain one without records or without a keyed peer', async () => {
    const { clocks, events, bundle, record, relayKey } = await setUp();
    const [payload, sig] = record.split('.') as [string, string];
    const altered = `${Buffer.from(Buffer.from(payload, 'base64url').toString().replace('"at":', '"at":1')).toString('base64url')}.${sig}`;
    const refused = await clocks.of({ name: 'relay-1', publicKey: relayKey }, [bundle.bytes], plain(20_000), {
      records: [altered],
      peerClock,
    });
    expect(refused?.('ship-7/a1')).toBeNull();
    expect(events).toMatchObject([{ outcome: 'bad-signature', source: 'ship-7/a1' }]);
    // no record of the source: the plain estimate, bounded as before (decision 230)
    const absent = await clocks.of({ name: 'relay-1', publicKey: relayKey }, [bundle.bytes], plain(20_000), {
      records: [],
      peerClock,
    });
    expect(absent?.('ship-7/a1')).toEqual({ offsetMs: 20_000, uncertaintyMs: 0 });
    // an older relay (no key enrolled): records are not checked at all
    const older = await clocks.of({ name: 'relay-1', publicKey: null }, [bundle.bytes], plain(20_000), {
      records: [record],
      peerClock,
    });
    expect(older?.('ship-7/a1')).toEqual({ offsetMs: 20_000, uncertaintyMs: 0 });
    expect(events).toHaveLength(1);
  });

  it('refuses a batch without a record from a source that signed before (stripped below), but not one whose record claims no term', async () => {
    const { clocks, events, bundle, record, relayKey, agent } = await setUp();
    const peer = { name: 'relay-1', publicKey: relayKey };
    const next = await makeBundle();
    // before any chain of ship-7/a1 verified, a batch without records keeps its plain estimate
    expect(
      (await clocks.of(peer, [next.bytes], plain(20_000), { records: [], peerClock }))?.('ship-7/a1'),
    ).toEqual({
      offsetMs: 20_000,
      uncertaintyMs: 0,
    });
    await clocks.of(peer, [bundle.bytes], plain(8), { records: [record], peerClock });
    events.length = 0;
    const stripped = await clocks.of(peer, [next.bytes], plain(20_000), { records: [], peerClock });
    expect(stripped?.('ship-7/a1')).toBeNull();
    expect(events).toMatchObject([{ outcome: 'unsigned', source: 'ship-7/a1', peer: 'relay-1' }]);
    // the agent just started: its record covers the bundle but has no stamped exchange yet
    events.length = 0;
    const fresh = await signCustodyRecord(
      { v: 1, role: 'agent', signer: 'ship-7/a1', at: T, up: null, bundles: [await bundleRef(next.bytes)] },
      (d) => signBytes(agent.privateKey, d),
    );
    const started = await clocks.of(peer, [next.bytes], plain(8), { records: [fresh], peerClock });
    expect(started?.('ship-7/a1')).toEqual({ offsetMs: 8, uncertaintyMs: 0 });
    expect(events).toEqual([]);
  });
});
