import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ClockEstimate, generateSigningKeyPair, TRUSTED_CLOCK, wire2 } from '@driftline/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { HopClient } from '../src/client.js';
import { createHopServer, encodePush, type PushForms } from '../src/index.js';
import { MemoryWire2Node, wire2Registration } from '../src/testing.js';

/**
 * The agent's clock term in a hop v2 push (field 10, docs/decisions/495-hop-v2-on-the-agent-link.md): the
 * node that takes the push notes it as v1 notes `driftline-clock`, and hands its backend the push's
 * source clock as v1's `driftline-source-clocks` composes it (the agent's own source: `0;u=0` + the term).
 */
const TOKEN = 'secret-token';
const closers: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

async function world() {
  const backend = new MemoryWire2Node({ name: 'relay-1', role: 'relay' });
  backend.addToken(TOKEN, { name: 'ship-7', sites: ['ship-7'] });
  const hop = createHopServer(backend, { uploads: { directory: mkdtempSync(join(tmpdir(), 'hop-w2c-')) } });
  const { url } = await hop.listen();
  closers.push(() => hop.close());
  const client = new HopClient({ url, token: TOKEN, timeoutMs: 10_000 });
  closers.push(() => client.abort());
  const keys = await generateSigningKeyPair();
  const reg = await client.registerWire2(await wire2Registration(keys));
  if (!reg.ok) throw new Error(reg.message);
  let seq = 1;
  const encode = (clock: ClockEstimate | null, forms: PushForms = { clock: true }) =>
    encodePush(
      { epoch: 1, changes: Uint8Array.of(seq), blobs: [], priority: 'status' },
      { from: reg.value.from, seq: seq++, t0: Date.now(), clock },
      keys.privateKey,
      forms,
    );
  const push = async (clock: ClockEstimate | null, forms?: PushForms) => {
    const message = await encode(clock, forms);
    const r = await client.exchangeWire2(message);
    if (!r.ok) throw new Error(r.message);
    return message;
  };
  return { backend, push, encode, client };
}

describe("a v2 push's clock term at the node that takes it", () => {
  it('is the source clock of the push, and stands for the pushes after it that state none', async () => {
    const { backend, push } = await world();
    const sent = await push({ offsetMs: -420_000, uncertaintyMs: 2040 });
    const d = wire2.decodeMessage(sent);
    expect(d.ok && (d.value.body as wire2.PushBody).clock).toEqual({
      offsetMs: -420_000,
      uncertaintyMs: 2040,
    });
    expect(backend.lastClocks?.('ship-7/a1')).toEqual({ offsetMs: -420_000, uncertaintyMs: 2040 });
    // no other source is known by it
    expect(backend.lastClocks?.('ship-7/a2')).toBeNull();
    // an agent just restarted has no sample yet: the last term it gave stands, as v1's peer clock does
    await push(null);
    expect(backend.lastClocks?.('ship-7/a1')).toEqual({ offsetMs: -420_000, uncertaintyMs: 2040 });
    await push({ offsetMs: 35, uncertaintyMs: 900 });
    expect(backend.lastClocks?.('ship-7/a1')).toEqual({ offsetMs: 35, uncertaintyMs: 900 });
    await push(TRUSTED_CLOCK);
    expect(backend.lastClocks?.('ship-7/a1')).toMatchObject({ offsetMs: 0, uncertaintyMs: 0, trusted: true });
    expect(backend.pushes).toHaveLength(4);
  });

  it('is the agent’s signed word: a term changed on the way refuses the push and is not noted', async () => {
    const { backend, push, encode, client } = await world();
    await push({ offsetMs: 310, uncertaintyMs: 40 });
    const message = await encode({ offsetMs: 310, uncertaintyMs: 40 });
    // zigzag 620 (0x026c) → 621 (0x026d): −311 ms, as a hop that wants the agent's times moved would write
    const at = Buffer.from(message).indexOf(Buffer.from('0a8219026c1828', 'hex'));
    expect(at).toBeGreaterThan(0);
    const lie = message.slice();
    lie[at + 4] = 0x6d;
    const r = await client.exchangeWire2(lie);
    expect(r.ok ? 200 : r.code).toBe('bad-signature');
    expect(backend.pushes).toHaveLength(1);
    expect(backend.lastClocks?.('ship-7/a1')).toEqual({ offsetMs: 310, uncertaintyMs: 40 });
  });

  it('is not sent where the link does not state the form, and then the push has no source clock', async () => {
    const { backend, push } = await world();
    const sent = await push({ offsetMs: 12, uncertaintyMs: 3 }, {});
    const d = wire2.decodeMessage(sent);
    expect(d.ok && 'clock' in (d.value.body as wire2.PushBody)).toBe(false);
    expect(backend.lastClocks?.('ship-7/a1')).toBeNull();
  });
});
