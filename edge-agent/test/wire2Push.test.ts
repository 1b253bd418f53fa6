import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HopClient } from '@driftline/hop/client';
import {
  type BundleHeader,
  type ClockEstimate,
  type DocDeltaPayload,
  encodeBatch,
  encodeBundle,
  generateSigningKeyPair,
  PLAN_DETAIL_CONTENT_TYPE,
  publicKeyToText,
  TRUSTED_CLOCK,
  wire2,
} from '@driftline/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import {
  custodyProblem,
  REGISTER_AGAIN_MS,
  Wire2Link,
  type Wire2LinkOptions,
} from '../src/adapters/http/Wire2Link.js';
import { readWire2Links, Wire2State } from '../src/adapters/http/wire2State.js';

/**
 * A v2 push as the agent sends it. It is stored upstream only on the node's custody of it (decision 495):
 * a 200 answer that is not a custody message from that node, to this agent, covering the push, is a failed
 * push (sent again later), not a receipt. Its blob announcements go in binary only where the link says every
 * node on the way reads them (decision 510).
 */
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const info: wire2.Wire2Info = { wire: [1, 2], from: 77, node: 5, maxHoldS: 3600, keep: 2 };
const node = await generateSigningKeyPair();
const custody = (o: { from?: number; to?: number; upTo?: number; kind?: 'custody' | 'pull' }) =>
  wire2.encodeMessage(
    o.kind === 'pull'
      ? { kind: 'pull', from: o.from ?? 5, to: o.to ?? 77, seq: 1, body: { have: 0, holdS: 0 } }
      : { kind: 'custody', from: o.from ?? 5, to: o.to ?? 77, seq: 1, body: { upTo: o.upTo ?? 1 } },
    node.privateKey,
  );

describe('custody of a v2 push at the agent', () => {
  it('names what is wrong with an answer that is not the custody of the push', async () => {
    expect(custodyProblem(await custody({}), info, 1)).toBeNull();
    expect(custodyProblem(await custody({ upTo: 4 }), info, 3)).toBeNull(); // cumulative
    expect(custodyProblem(await custody({ upTo: 2 }), info, 3)).toBe('custody up to 2, not 3');
    expect(custodyProblem(await custody({ from: 6 }), info, 1)).toBe('from node 6, not 5');
    expect(custodyProblem(await custody({ to: 78 }), info, 1)).toBe("to 78, not this agent's 77");
    expect(custodyProblem(await custody({ kind: 'pull' }), info, 1)).toBe('a pull message');
    expect(custodyProblem(new TextEncoder().encode('<html>ok</html>'), info, 1)).toMatch(/hop v2 message/);
  });

  it('fails the push (to be sent again) when the upstream answers 200 with another agent’s custody', async () => {
    const { link, delta } = await linkAnswering(info, async () => custody({ to: 78, upTo: 1 }));
    const r = await link.push(encodeBatch([await delta([])]));
    expect(r?.ok).toBe(false);
    expect(r?.ok === false && r.error).toMatch(/is not its custody of it \(to 78, not this agent's 77\)/);
  });
});

describe('blob announcements of a v2 push (decision 510)', () => {
  const blobs = [
    {
      sha256: '5e'.repeat(32) as never,
      size: 4321,
      contentType: PLAN_DETAIL_CONTENT_TYPE,
      runId: '01KB7Z8Q0000000000000000CD' as never,
    },
  ];
  const sent = async (pushForms?: string[]) => {
    const pushed: wire2.PushBody[] = [];
    const at = { ...info, carries: [wire2.CARRIES_PUBLICATIONS], ...(pushForms ? { pushForms } : {}) };
    const { link, delta } = await linkAnswering(at, async (m) => {
      const d = wire2.decodeMessage(m);
      if (d.ok) pushed.push(d.value.body as wire2.PushBody);
      return custody({ upTo: d.ok ? d.value.seq : 0 });
    });
    const r = await link.push(encodeBatch([await delta(blobs)]));
    expect(r?.ok).toBe(true);
    return pushed;
  };

  it('go in binary where the link says every node on the way reads them', async () => {
    const [body] = await sent([wire2.PUSH_FORM_BLOB_LIST]);
    expect(body?.blobs).toBeUndefined();
    const list = wire2.decodeBlobList(body?.blobList as Uint8Array);
    expect(list.ok && list.value).toEqual(blobs);
  });

  it('go as JSON to a link that does not say so (an older relay or hub refuses field 9)', async () => {
    for (const forms of [undefined, [wire2.PUSH_FORM_DZ1]]) {
      const [body] = await sent(forms);
      expect(body?.blobList).toBeUndefined();
      expect(JSON.parse(new TextDecoder().decode(body?.blobs))).toEqual(blobs);
    }
  });

  it('are not taken as the heads of a push of no change: its ack is passed over (decision 495)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agent-state-'));
    dirs.push(dir);
    const state = new Wire2State(join(dir, 'wire2-state.json'));
    const sent: { seq: number; tip: Uint8Array }[] = [];
    const { link, delta } = await linkAnswering(
      { ...info, pushForms: [wire2.PUSH_FORM_BLOB_LIST] },
      async (m) => {
        const d = wire2.decodeMessage(m);
        if (d.ok) sent.push({ seq: d.value.seq, tip: await wire2.messageTip(d.value.signature) });
        return custody({ upTo: d.ok ? d.value.seq : 0 });
      },
      state,
    );
    expect((await link.push(encodeBatch([await delta(blobs, new Uint8Array(0))])))?.ok).toBe(true);
    expect((await link.push(encodeBatch([await delta(blobs)])))?.ok).toBe(true);
    // the first carried no change: an ack naming it names nothing; the second's names its heads
    const [none, some] = sent;
    if (!none || !some) throw new Error('two pushes were not sent');
    expect(state.acked(none.seq, none.tip)).toBeNull();
    expect(state.acked(some.seq, some.tip)).toEqual({ doc: 'ship-7/a1/epoch-1', heads: [] });
  });
});

/** The body of the one push a link sent, given its registration's forms, clock and ledger round. */
async function pushedBody(
  pushForms: string[] | undefined,
  clock: ClockEstimate | null,
  extra: Pick<Wire2LinkOptions, 'ackLaterS'> = {},
): Promise<wire2.PushBody | undefined> {
  const pushed: wire2.PushBody[] = [];
  const { link, delta } = await linkAnswering(
    { ...info, ...(pushForms ? { pushForms } : {}) },
    async (m) => {
      const d = wire2.decodeMessage(m);
      if (d.ok) pushed.push(d.value.body as wire2.PushBody);
      return custody({ upTo: d.ok ? d.value.seq : 0 });
    },
    undefined,
    clock,
    extra,
  );
  expect((await link.push(encodeBatch([await delta([])])))?.ok).toBe(true);
  return pushed[0];
}

describe("a v2 push's clock term (decision 495)", () => {
  const sent = (clock: ClockEstimate | null, pushForms?: string[]) => pushedBody(pushForms, clock);

  it("carries the agent's clock minus its upstream's where the link states the clock form", async () => {
    const clock = { offsetMs: 420_000, uncertaintyMs: 2040 };
    expect((await sent(clock, [wire2.PUSH_FORM_CLOCK]))?.clock).toEqual(clock);
    expect((await sent({ offsetMs: -12, uncertaintyMs: 7 }, [...wire2.PUSH_FORMS]))?.clock).toEqual({
      offsetMs: -12,
      uncertaintyMs: 7,
    });
    expect((await sent(TRUSTED_CLOCK, [wire2.PUSH_FORM_CLOCK]))?.clock).toEqual(TRUSTED_CLOCK);
  });

  it('carries none before its first sample, nor to a link that does not state the form (an older node refuses field 10)', async () => {
    expect(await sent(null, [wire2.PUSH_FORM_CLOCK])).not.toHaveProperty('clock');
    const clock = { offsetMs: 420_000, uncertaintyMs: 2040 };
    for (const forms of [undefined, [wire2.PUSH_FORM_BLOB_LIST, wire2.PUSH_FORM_DZ1]])
      expect(await sent(clock, forms)).not.toHaveProperty('clock');
  });
});

describe('a push of a round under way (decision 525)', () => {
  const sent = (ackLaterS: number | undefined, pushForms?: string[]) =>
    pushedBody(pushForms, null, { ackLaterS: () => ackLaterS });

  it('asks its ack to come with the next push where every node on the way reads the field', async () => {
    expect((await sent(300, [wire2.PUSH_FORM_ACK_LATER]))?.ackLater).toBe(300);
    expect((await sent(300, [...wire2.PUSH_FORMS]))?.ackLater).toBe(300);
  });

  it('asks nothing outside a round, nor of a link that does not state the form (an older node refuses field 11)', async () => {
    expect(await sent(undefined, [...wire2.PUSH_FORMS])).not.toHaveProperty('ackLater');
    for (const forms of [undefined, [wire2.PUSH_FORM_BLOB_LIST, wire2.PUSH_FORM_CLOCK]])
      expect(await sent(300, forms)).not.toHaveProperty('ackLater');
  });
});

describe('custody with the next push (decision 530)', () => {
  /** One push with `ackLaterS` to a node stating `pushForms` and answering a bare 204. */
  const answered204 = async (ackLaterS: number | undefined, pushForms: string[]) => {
    const { link, delta } = await linkAnswering({ ...info, pushForms }, async () => null, undefined, null, {
      ackLaterS: () => ackLaterS,
    });
    return link.push(encodeBatch([await delta([])]));
  };

  it('takes a 204 to a push of a round under way as held, where the node states the form', async () => {
    const r = await answered204(300, [...wire2.PUSH_FORMS]);
    expect(r?.ok && r.value.map((x) => [x.status, x.by])).toEqual([['stored', 'node 5']]);
  });

  it('fails a 204 (sent again later) where the node does not state the form, or the push asked nothing', async () => {
    for (const [ackLaterS, forms] of [
      [300, [wire2.PUSH_FORM_ACK_LATER]],
      [undefined, [...wire2.PUSH_FORMS]],
      [300, wire2.PUSH_FORMS.filter((f) => f !== wire2.PUSH_FORM_ACK_LATER)],
    ] as const) {
      const r = await answered204(ackLaterS, [...forms]);
      expect(r?.ok === false && r.error).toMatch(/is not its custody of it/);
    }
  });
});

describe('the registration with an upstream (decision 510)', () => {
  it('is renewed a day after it was made, so what the upstream states follows its upgrades', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agent-register-'));
    dirs.push(dir);
    const keys = await generateSigningKeyPair();
    let now = 1_000_000;
    const state = new Wire2State(join(dir, 'wire2-state.json'));
    const answers: ({ ok: true; value: wire2.Wire2Info } | { ok: false; status: number; message: string })[] =
      [
        { ok: true, value: info },
        { ok: false, status: 503, message: 'starting' },
        { ok: true, value: { ...info, pushForms: [...wire2.PUSH_FORMS] } },
      ];
    let asked = 0;
    const client = {
      url: 'http://relay-1:7000',
      registerWire2: async () => {
        await new Promise((ok) => setTimeout(ok, 5));
        return answers[asked++];
      },
      wire2Carrier: () => ({ carrier: 'http/1.1' as const }),
    } as unknown as HopClient;
    const link = new Wire2Link(client, {
      site: 'ship-7',
      agent: 'a1',
      privateKey: keys.privateKey,
      publicKey: await publicKeyToText(keys.publicKey),
      state,
      now: () => now,
    });
    // a push and two held pulls asking at once: one registration
    const first = await Promise.all([link.ready(), link.ready(), link.ready()]);
    expect(asked).toBe(1);
    expect(first.every((x) => x?.pushForms === undefined)).toBe(true);
    now += REGISTER_AGAIN_MS - 1;
    await link.ready();
    expect(asked).toBe(1);
    // a day on: asked again; the node is busy, so the registration it has serves meanwhile
    now += 1;
    expect((await link.ready())?.node).toBe(info.node);
    expect(asked).toBe(2);
    expect(await link.ready()).not.toBeNull();
    expect(asked).toBe(2); // not on every exchange while it is busy
    now += 600_000;
    expect((await link.ready())?.pushForms).toEqual([...wire2.PUSH_FORMS]);
    expect(asked).toBe(3);
    // the same node: `edge-agent status` still says since when v2 is spoken with it, not the renewal
    const link0 = readWire2Links(join(dir, 'wire2-state.json'))[client.url];
    expect(link0?.wire === 2 && link0.since).toBe(1_000_000);
  });
});

/** A v2 link to a node registered as `at`, whose exchanges `answer` answers 200; and a delta of this agent. */
async function linkAnswering(
  at: wire2.Wire2Info,
  /** The answer's body; null: a bare 204. */
  answer: (message: Uint8Array) => Promise<Uint8Array | null>,
  state?: Wire2State,
  /** The client's clock minus the node's, as its exchanges measured it (null: no sample yet). */
  clock: ClockEstimate | null = null,
  /** More of the link's options (the ledger's `ackLaterS`). */
  extra: Pick<Wire2LinkOptions, 'ackLaterS'> = {},
) {
  const dir = mkdtempSync(join(tmpdir(), 'agent-custody-'));
  dirs.push(dir);
  const keys = await generateSigningKeyPair();
  const client = {
    url: 'http://relay-1:7000',
    registerWire2: async () => ({ ok: true, value: at }),
    wire2Carrier: () => ({ carrier: 'http/1.1' as const }),
    exchangeWire2: async (m: Uint8Array) => {
      const body = await answer(m);
      return { ok: true, value: body ? { status: 200, body } : { status: 204, body: new Uint8Array(0) } };
    },
    clock: () => clock,
  } as unknown as HopClient;
  const link = new Wire2Link(client, {
    site: 'ship-7',
    agent: 'a1',
    privateKey: keys.privateKey,
    publicKey: await publicKeyToText(keys.publicKey),
    state: state ?? new Wire2State(join(dir, 'wire2-state.json')),
    now: Date.now,
    ...extra,
  });
  const header = {
    id: '01KB7Z8Q0000000000000000AB',
    kind: 'doc-delta',
    source: { site: 'ship-7', agent: 'a1' },
    destination: 'hub',
    created: Date.now(),
    lifetimeS: 3600,
    priority: 'status',
    doc: 'ship-7/a1/epoch-1',
    heads: [],
  } as unknown as BundleHeader & { kind: 'doc-delta' };
  const delta = (blobs: DocDeltaPayload['blobs'], changes = Uint8Array.of(1, 2, 3)) =>
    encodeBundle(header, { epoch: 1, changes, blobs }, keys.privateKey);
  return { link, delta };
}
