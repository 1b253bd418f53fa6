import { describe, expect, it } from 'vitest';
import {
  bundleRef,
  formatCustody,
  formatStamp,
  parseCustody,
  parseStamp,
  readCustodyRecord,
  type StampedExchange,
  signCustodyRecord,
  stampBytes,
} from './custody.js';
import { verifyChain } from './custodyChain.js';
import { generateSigningKeyPair, publicKeyToText, signBytes } from './keys.js';

/** A party with a key: signs records and stamps exchanges it serves. */
async function party() {
  const kp = await generateSigningKeyPair();
  const text = await publicKeyToText(kp.publicKey);
  return { kp, text, sign: (d: Uint8Array) => signBytes(kp.privateKey, d) };
}

type Party = Awaited<ReturnType<typeof party>>;

/**
 * One exchange between a client whose clock reads `true + client` and a server at `true + server`,
 * with `up` and `down` ms one way, at true time `at`; the server stamps it.
 */
async function exchange(
  server: Party,
  o: { at: number; client: number; server: number; up: number; down: number; hold?: number },
): Promise<StampedExchange> {
  const t0 = o.at + o.client;
  const t1 = o.at + o.up + o.server;
  const t2 = t1 + (o.hold ?? 3);
  const t3 = o.at + o.up + (o.hold ?? 3) + o.down + o.client;
  const stamp = parseStamp(formatStamp(server.text, await server.sign(stampBytes(t0, t1, t2))));
  if (!stamp) throw new Error('stamp did not parse');
  return { t: [t0, t1, t2, t3], ...stamp };
}

const T = 1_800_000_000_000;

describe('custody records and stamps (decision 290)', () => {
  it('round-trips a record and a header, and refuses what is not one', async () => {
    const a = await party();
    const ref = await bundleRef(new Uint8Array([1, 2, 3]));
    expect(ref).toMatch(/^[A-Za-z0-9_-]{22}$/);
    const rec = await signCustodyRecord(
      { v: 1, role: 'agent', signer: 'ship-1/a1', at: T, up: null, bundles: [ref] },
      a.sign,
    );
    expect(readCustodyRecord(rec)?.record).toMatchObject({ signer: 'ship-1/a1', bundles: [ref] });
    expect(parseCustody(formatCustody([rec, rec]))).toEqual([rec, rec]);
    // the cap leaves out what does not fit
    expect(parseCustody(formatCustody([rec, rec], rec.length + 1))).toEqual([rec]);
    expect(readCustodyRecord('x.y')).toBeNull();
    expect(readCustodyRecord(`${rec.split('.')[0]}x.${rec.split('.')[1]}`)).toBeNull();
    expect(parseStamp('ed25519:short sig')).toBeNull();
    expect(parseStamp(null)).toBeNull();
  });

  it('composes a two-relay chain from signed terms only, within its stated uncertainty', async () => {
    const [agent, r1, r2] = [await party(), await party(), await party()];
    const ref = await bundleRef(new Uint8Array([9]));
    // agent +5000, relay-1 −2000, relay-2 +100 against true time; asymmetric links
    const aUp = await exchange(r1, { at: T, client: 5000, server: -2000, up: 40, down: 10 });
    const r1Up = await exchange(r2, { at: T + 60_000, client: -2000, server: 100, up: 5, down: 25 });
    const records = [
      await signCustodyRecord(
        { v: 1, role: 'agent', signer: 'ship-1/a1', at: T + 5000, up: aUp, bundles: [ref] },
        agent.sign,
      ),
      await signCustodyRecord(
        {
          v: 1,
          role: 'relay',
          signer: r1.text,
          at: T + 60_000 - 2000,
          up: r1Up,
          tookAt: T + 1000 - 2000,
          residenceMs: 59_000,
          bundles: [ref],
        },
        r1.sign,
      ),
    ];
    const keys = new Map([
      [r1.text, r1.kp.publicKey],
      [r2.text, r2.kp.publicKey],
    ]);
    const input = {
      records,
      source: 'ship-1/a1',
      refs: [ref],
      agentKey: agent.kp.publicKey,
      relayKey: async (k: string) => keys.get(k) ?? null,
      postedBy: r2.text,
    };
    const r = await verifyChain(input);
    expect(r.kind).toBe('signed');
    if (r.kind !== 'signed') return;
    // agent − relay-2 is 4900 ms; the error is at most the stated uncertainty
    expect(Math.abs(r.estimate.offsetMs - 4900)).toBeLessThanOrEqual(r.estimate.uncertaintyMs);
    expect(r.estimate.uncertaintyMs).toBeLessThanOrEqual(60);
    expect(r).toMatchObject({ hops: 2, residenceMs: 59_000 });

    // relay-2 not enrolled: the stamp of relay-1's exchange is no one's
    expect(
      await verifyChain({ ...input, relayKey: async (k) => (k === r1.text ? r1.kp.publicKey : null) }),
    ).toMatchObject({ kind: 'refused', reason: 'unknown-key' });
    // relay-1's record missing: a hop of the path signed nothing
    expect(await verifyChain({ ...input, records: records.slice(0, 1) })).toMatchObject({
      kind: 'refused',
      reason: 'incomplete',
    });
    // another source's bundles: nothing of it here (the bounds of 230 apply)
    expect(await verifyChain({ ...input, source: 'ship-2/a1' })).toEqual({ kind: 'absent' });
  });

  it('refuses a rewritten record, rewritten stamp times and a record mangled on the way', async () => {
    const [agent, r1] = [await party(), await party()];
    const ref = await bundleRef(new Uint8Array([7]));
    const honest = await exchange(r1, { at: T, client: 0, server: 0, up: 20, down: 20 });
    const sign = (up: StampedExchange) =>
      signCustodyRecord({ v: 1, role: 'agent', signer: 'ship-1/a1', at: T, up, bundles: [ref] }, agent.sign);
    const input = (records: string[]) => ({
      records,
      source: 'ship-1/a1',
      refs: [ref],
      agentKey: agent.kp.publicKey,
      relayKey: async (k: string) => (k === r1.text ? r1.kp.publicKey : null),
      postedBy: r1.text,
    });
    const good = await sign(honest);
    expect(await verifyChain(input([good]))).toMatchObject({ kind: 'signed', hops: 1 });

    // a hop between rewrites relay-1's times by +20 s (consistently): the agent signs them, the stamp fails
    const shifted: StampedExchange = {
      ...honest,
      t: [honest.t[0], honest.t[1] + 20_000, honest.t[2] + 20_000, honest.t[3]],
    };
    expect(await verifyChain(input([await sign(shifted)]))).toMatchObject({
      kind: 'refused',
      reason: 'bad-stamp',
    });

    // the agent's record with its offset changed after signing
    const [payload, sig] = good.split('.') as [string, string];
    const json = JSON.parse(Buffer.from(payload, 'base64url').toString());
    json.up.t[1] -= 20_000;
    const rewritten = `${Buffer.from(JSON.stringify(json)).toString('base64url')}.${sig}`;
    expect(await verifyChain(input([rewritten]))).toMatchObject({ kind: 'refused', reason: 'bad-signature' });
    // bytes flipped so it no longer reads
    expect(await verifyChain(input([`${payload.slice(0, -2)}!!.${sig}`]))).toMatchObject({
      kind: 'refused',
      reason: 'malformed',
    });
    // an agent the hub does not know
    expect(await verifyChain({ ...input([good]), agentKey: null })).toMatchObject({ reason: 'unknown-key' });
  });
});
