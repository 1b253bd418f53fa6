import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateSigningKeyPair, wire2 } from '@driftline/protocol';
import { until } from '@driftline/protocol/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { HopClient } from '../src/client.js';
import { MAX_REPEATS_HELD } from '../src/http/downlinkWaiters.js';
import { createHopServer } from '../src/index.js';
import { MemoryWire2Node, makeBundle, wire2Registration } from '../src/testing.js';

/**
 * Held v2 pulls keep decision 340's promise as v1's do (docs/decisions/340-no-gap-between-held-pulls.md,
 * 495): of an agent's two held pulls one still waits while the other's answer travels, and a pull the agent
 * sent before that answer reached it (its `have` still the old cursor) is held, not answered at once with
 * the same items, so something waits at the relay for what comes next; past `MAX_REPEATS_HELD` such pulls
 * the agent plainly did not get the answer, and the next is answered in full.
 */
const TOKEN = 'secret-token';
const closers: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

async function relayAndAgent() {
  const backend = new MemoryWire2Node({ name: 'relay-1', role: 'relay', maxHoldS: 900 });
  backend.addToken(TOKEN, { name: 'ship-7', sites: ['ship-7'] });
  const hop = createHopServer(backend, {
    uploads: { directory: mkdtempSync(join(tmpdir(), 'hop-w2held-')) },
    h2c: false,
  });
  const { url } = await hop.listen();
  closers.push(() => hop.close());
  const client = new HopClient({ url, token: TOKEN, timeoutMs: 10_000 });
  closers.push(() => client.abort());
  const keys = await generateSigningKeyPair();
  const reg = await client.registerWire2(await wire2Registration(keys));
  if (!reg.ok) throw new Error(reg.message);
  let seq = 1;
  /** A v2 pull after `have`, held up to `holdS`: its items and cursor, or null for a 204. */
  const pull = async (have: number, holdS: number) => {
    const m = await wire2.encodeMessage(
      { kind: 'pull', from: reg.value.from, to: reg.value.node, seq: seq++, body: { have, holdS } },
      keys.privateKey,
    );
    const r = await client.exchangeWire2(m, undefined, holdS, true);
    if (!r.ok) throw new Error(r.message);
    if (r.value.status === 204) return null;
    const a = wire2.decodePullAnswer(r.value.body);
    if (!a.ok) throw new Error(a.error.message);
    return a.value;
  };
  const ack = async () =>
    (await makeBundle({ kind: 'ack', source: 'hub', destination: { site: 'ship-7' } } as never)).bytes;
  return { backend, pull, ack };
}

describe('held v2 pulls: no gap between them (decision 340)', () => {
  it('keeps the second held pull waiting while the first answers, and holds one that would repeat that answer', async () => {
    const { backend, pull, ack } = await relayAndAgent();
    const a = pull(0, 900);
    await until(() => backend.held.size === 1, 'one pull held');
    const b = pull(0, 900);
    await until(() => backend.held.size === 2, 'two pulls held');
    backend.enqueueDownlink('ship-7', await ack());
    const woke = await a;
    expect(woke?.items).toHaveLength(1);
    // b still waits at the relay while a's answer travels
    expect(backend.held.size).toBe(1);
    // A pull the agent sent before a's answer reached it (the old cursor) finds only what a carried: held.
    const c = pull(0, 900);
    await until(() => backend.held.size === 2, 'two pulls held');
    expect(backend.held.size).toBe(2);
    // What comes next goes at once, to the pull that ends first (b, the old cursor: both items).
    backend.enqueueDownlink('ship-7', await ack());
    expect((await b)?.items).toHaveLength(2);
    // c, woken with nothing new since, is let go empty rather than repeat.
    backend.held.releaseAll();
    expect(await c).toBeNull();
  });

  it('answers in full, not held, an agent that keeps pulling with the cursor before an answer it never got', async () => {
    const { backend, pull, ack } = await relayAndAgent();
    const a = pull(0, 900);
    await until(() => backend.held.size === 1, 'one pull held');
    backend.enqueueDownlink('ship-7', await ack());
    expect((await a)?.items).toHaveLength(1);
    // say a hop swallowed that answer: the agent pulls with the old cursor, held as a repeat at first ...
    const held: Array<ReturnType<typeof pull>> = [];
    // each counted at the relay before the next is sent: past two held, a pull's arrival shows as the
    // one two before it let go (superseded, answered empty), since the count of held pulls stays 2
    for (let i = 0; i < MAX_REPEATS_HELD; i++) {
      held.push(pull(0, 900));
      if (i < 2) await until(() => backend.held.size === i + 1, `${i + 1} pulls held`);
      else expect(await held[i - 2]).toBeNull();
    }
    expect(backend.held.size).toBe(2);
    // ... and past that many, answered at once, in full
    expect((await pull(0, 900))?.items).toHaveLength(1);
    backend.held.releaseAll();
    for (const p of held) expect(await p).toBeNull();
  });
});
