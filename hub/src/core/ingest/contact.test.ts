import { describe, expect, it } from 'vitest';
import { stepFixture } from '../../../test/ingestSteps.js';
import { KeyCache } from '../verify.js';
import { recordContact } from './contact.js';
import { verifyAll } from './verifyAll.js';

describe('ingest steps: clock and contact', () => {
  it('updates the agent offset, last contact and upstream, and the site row, on the hub clock', async () => {
    const f = await stepFixture();
    f.sim.plan('prod', 'net', 'clean');
    const bytes = await f.sim.delta(); // created now on the agent's clock
    f.clock.advance(4_000); // received 4 s later: one-way transit says the agent is at most 4 s behind
    const b = f.batch(1);
    const [a] = await verifyAll(b, [bytes], new KeyCache(), f.deps.count);
    const { offsetMs: offset } = await recordContact(b, a!.v, 'relay-1', undefined);
    expect(offset).toBe(-4_000);
    expect(b.agents.get('ship-7/a1')).toMatchObject({
      lastContactAt: b.now,
      upstream: 'relay-1',
      clockOffsetMs: -4_000,
    });
    expect(b.sites.get('ship-7')).toMatchObject({
      site: 'ship-7',
      lastContactAt: b.now,
      upstream: 'relay-1',
    });
  });

  it('takes the path clock composed per hop when the relay gives one', async () => {
    const f = await stepFixture();
    f.sim.plan('prod', 'net', 'clean');
    const bytes = await f.sim.delta();
    f.clock.advance(4_000);
    const b = f.batch(1);
    const [a] = await verifyAll(b, [bytes], new KeyCache(), f.deps.count);
    const { offsetMs: offset } = await recordContact(b, a!.v, 'relay-1', () => ({
      offsetMs: 250,
      uncertaintyMs: 40,
    }));
    expect(offset).toBe(250);
    expect(b.agents.get('ship-7/a1')?.clockOffsetUncertaintyMs).toBe(40);
  });

  it('moves no contact for a replay: an older bundle that brings nothing new', async () => {
    const f = await stepFixture();
    f.sim.plan('prod', 'net', 'clean');
    const old = await f.sim.delta();
    f.clock.advance(60_000);
    f.sim.plan('prod', 'net', 'drift');
    const newer = await f.sim.delta();
    f.clock.advance(1_000);
    const b1 = f.batch(1);
    const [n] = await verifyAll(b1, [newer], new KeyCache(), f.deps.count);
    expect((await recordContact(b1, n!.v, 'relay-1', undefined)).fresh).toBe(true);
    const row = b1.agents.get('ship-7/a1');
    const contactAt = row?.lastContactAt;
    f.clock.advance(3_600_000);
    await f.store.commit({ agents: [row!] });
    const b2 = f.batch(1);
    const [o] = await verifyAll(b2, [old], new KeyCache(), f.deps.count);
    // The old bundle's changes are in the newer one (deltas are cumulative since the last ack).
    const c = await recordContact(b2, o!.v, 'relay-9', undefined, false);
    expect(c.fresh).toBe(false);
    expect(o!.v.agent.lastContactAt).toBe(contactAt);
    expect(o!.v.agent.upstream).toBe('relay-1');
    expect(b2.sites.has('ship-7')).toBe(false);
  });
});
