import { createHash, randomBytes } from 'node:crypto';
import { createHopServer, MemoryHopBackend, type Wire2Backend, wire2SiteId } from '@driftline/hop';
import { HopClient } from '@driftline/hop/client';
import { wire2Registration } from '@driftline/hop/testing';
import { cryptoRandomBytes, generateSigningKeyPair, monotonicUlid, wire2 } from '@driftline/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { describeBundle } from '../src/core/describeBundle.js';
import { announcedBlobs } from '../src/core/publications/publicationFetch.js';
import { registerWhenHeard, startRelay, tmp, until, upstreamOf } from './helpers.js';

/**
 * The hub's compact publication manifest at a relay (docs/decisions/505-compact-publications.md): carried
 * down verbatim at bulk, its inline file kept without a fetch, and stated to agents only while the relay's
 * upstreams carry it.
 */
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

const hubKeys = await generateSigningKeyPair();
const ids = monotonicUlid(Date.now, cryptoRandomBytes);
const file = randomBytes(598);
const sha = createHash('sha256').update(file).digest('hex');

async function compact(id = ids()) {
  const body = wire2.publicationBody({
    publicationId: id,
    name: 'infra',
    fileKind: 'git',
    sha256: sha,
    size: file.length,
    expiresAt: 1_900_000_000_000,
    inline: file,
  });
  if (!body) throw new Error('no compact form');
  return wire2.encodeMessage(
    { kind: 'publication', from: 0, to: wire2SiteId('ship-7'), seq: 1, body },
    hubKeys.privateKey,
  );
}

/** A hub's place that speaks v2, says it carries `carries` down and reads pushes in `pushForms`. */
async function world(carries: string[], pushForms: string[] = []) {
  const hub = new MemoryHopBackend({ name: 'hub', role: 'hub' });
  const v2: Wire2Backend = {
    nodeId: 0,
    carries: () => carries,
    pushForms: () => pushForms,
    register: async () => 0,
    sender: async () => null,
    sign: () => new Uint8Array(64),
  };
  Object.assign(hub, { wire2: v2 });
  hub.addToken('hub-token', { name: 'relay', sites: ['*'] });
  const hop = createHopServer(hub, { uploads: { directory: tmp('term-') } });
  const up = await hop.listen();
  closers.push(() => hop.close());
  const { relay, url } = await startRelay({ sites: ['ship-7'], publications: { intervalMs: 50 } }, [
    upstreamOf('hub', up.url, 'hub-token'),
  ]);
  closers.push(() => relay.stop());
  const client = new HopClient({ url, token: relay.tokens.add('ship-7', ['ship-7']), timeoutMs: 10_000 });
  closers.push(async () => client.abort());
  const keys = await generateSigningKeyPair();
  const reg = await wire2Registration(keys, 'ship-7');
  const info = await registerWhenHeard(client, reg);
  if (!info.ok) throw new Error(info.message);
  return { hub, relay, client, keys, info: info.value };
}

describe('compact publication manifests at a relay', () => {
  it('reads one as a hub blob manifest at bulk, its inline file hashed here', async () => {
    const bytes = await compact();
    const d = describeBundle(bytes);
    if (!d.ok) throw new Error(d.message);
    expect(d.value).toMatchObject({ kind: 'blob', priority: 'bulk', dest: '', expiresAt: 1_900_000_000_000 });
    const [blob] = announcedBlobs('ship-7', [d.value]);
    expect(blob).toMatchObject({ sha256: sha, size: 598, name: 'infra', site: 'ship-7' });
    expect(Buffer.from(blob?.inline ?? []).equals(file)).toBe(true);
  });

  it('states it carries them while its upstream does, keeps the file without a fetch, and hands the message down verbatim', async () => {
    const { hub, relay, client, keys, info } = await world([wire2.CARRIES_PUBLICATIONS]);
    expect(info.carries).toEqual([wire2.CARRIES_PUBLICATIONS]);
    const message = await compact();
    hub.enqueueDownlink('ship-7', message);
    // the hub here holds no blob: only the manifest's own bytes can make it held
    await until(() => relay.publicationCache.list()[0]?.state === 'held', 10_000, 'the inline blob held');
    const pull = await wire2.encodeMessage(
      { kind: 'pull', from: info.from, to: info.node, seq: 1, body: { have: 0, holdS: 0 } },
      keys.privateKey,
    );
    const r = await client.exchangeWire2(pull);
    if (!r.ok) throw new Error(r.message);
    const page = wire2.decodePullAnswer(r.value.body);
    if (!page.ok) throw new Error(page.error.message);
    expect(page.value.items.map((i) => Buffer.from(i).toString('hex'))).toEqual([
      Buffer.from(message).toString('hex'),
    ]);
  });

  it("reads packed git heads (decision 520): keeps git's very file, states it carries them while its upstream does", async () => {
    const git = new TextEncoder().encode(
      `# v2 git bundle\n-${'a1'.repeat(20)} main\n${'b2'.repeat(20)} refs/heads/pr/1\n\nPACK${'x'.repeat(400)}`,
    );
    const body = wire2.publicationBody({
      publicationId: ids(),
      name: 'infra',
      fileKind: 'git',
      sha256: '',
      size: git.length,
      inline: git,
      packGitHeads: true,
    });
    if (!body?.gitHeads) throw new Error('not packed');
    const bytes = await wire2.encodeMessage(
      { kind: 'publication', from: 0, to: wire2SiteId('ship-7'), seq: 1, body },
      hubKeys.privateKey,
    );
    const d = describeBundle(bytes);
    if (!d.ok) throw new Error(d.message);
    const [blob] = announcedBlobs('ship-7', [d.value]);
    expect(blob).toMatchObject({ sha256: createHash('sha256').update(git).digest('hex'), size: git.length });
    expect(Buffer.from(blob?.inline ?? []).equals(git)).toBe(true);
    const { info } = await world([wire2.CARRIES_PUBLICATIONS, wire2.CARRIES_GIT_HEADS]);
    expect(info.carries).toEqual([wire2.CARRIES_PUBLICATIONS, wire2.CARRIES_GIT_HEADS]);
  });

  it('states nothing while its upstream carries none (an older hub)', async () => {
    const { info } = await world([]);
    expect(info.carries).toBeUndefined();
    expect(info.pushForms).toBeUndefined();
  });

  it('states only what it knows itself of what its upstream carries and reads (decision 510)', async () => {
    // a later hub's names this relay cannot decode: stated on, agents would send what this relay refuses
    const { info } = await world(
      [wire2.CARRIES_PUBLICATIONS, 'telegram'],
      [
        wire2.PUSH_FORM_BLOB_LIST,
        'changes-dz9',
        wire2.PUSH_FORM_DZ1,
        wire2.PUSH_FORM_CLOCK,
        wire2.PUSH_FORM_ACK_LATER,
      ],
    );
    expect(info.carries).toEqual([wire2.CARRIES_PUBLICATIONS]);
    // the clock term (decision 495) too: this relay composes it into the push's source clock; and the
    // ack's wait (decision 525), which it carries verbatim but must decode to carry
    expect(info.pushForms).toEqual([
      wire2.PUSH_FORM_BLOB_LIST,
      wire2.PUSH_FORM_DZ1,
      wire2.PUSH_FORM_CLOCK,
      wire2.PUSH_FORM_ACK_LATER,
    ]);
  });
});
