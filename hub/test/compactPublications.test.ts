import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as A from '@automerge/automerge';
import { wire2SiteId } from '@driftline/hop';
import {
  BATCH_CONTENT_TYPE,
  decodeBatch,
  decodeBundle,
  decodePayload,
  encodeBatch,
  generateSigningKeyPair,
  publicKeyFromText,
  READS_INLINE_PUBLICATIONS,
  READS_WIRE2_GIT_HEADS,
  READS_WIRE2_PUBLICATIONS,
  wire2,
} from '@driftline/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { sha256Hex } from '../src/adapters/hop/HubHopBackend.js';
import { createHub } from '../src/app.js';
import { parseConfig } from '../src/config.js';
import { enrol } from '../src/core/enrolment.js';
import { buildManifests } from '../src/core/publish/manifests.js';
import { AgentSim, TestClock } from './agentSim.js';
import { addTestUser } from './users.js';

/**
 * The compact publication manifest (docs/decisions/505-compact-publications.md): the hub sends it to a
 * site whose every live agent reads it, v1's signed `blob` bundle to the others.
 */
const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0)) await f();
});
const auth = { authorization: 'Bearer relay-token' };
const digest = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

async function start(reads: Record<string, string[]>) {
  const dir = mkdtempSync(join(tmpdir(), 'hub-compact-'));
  const cfg = parseConfig({ dataDir: dir, uiDir: join(dir, 'no-ui') }, dir, {});
  if (!cfg.ok) throw new Error(cfg.errors.join('; '));
  const clock = new TestClock();
  const hub = await createHub(cfg.config, { clock });
  const { url } = await hub.hop.listen(0, '127.0.0.1');
  cleanup.push(async () => {
    await hub.close();
    rmSync(dir, { recursive: true, force: true });
  });
  await hub.store.commit({
    peers: [{ tokenSha256: sha256Hex('relay-token'), name: 'relay-1', sites: ['*'] }],
  });
  for (const [site, said] of Object.entries(reads)) {
    const a = await AgentSim.create(site, 'a1', clock);
    await enrol(hub.store, { site, agent: 'a1', key: await a.publicKeyText() }, clock.now());
    a.plan('prod', 'net');
    a.doc = A.change(a.doc, (d) => {
      if (d.facts) d.facts.reads = said;
    });
    const post = await fetch(`${url}/v1/bundles`, {
      method: 'POST',
      headers: { ...auth, 'content-type': BATCH_CONTENT_TYPE },
      body: Buffer.from(encodeBatch([await a.delta()])),
    });
    expect(post.status).toBe(200);
  }
  const admin = { authorization: (await addTestUser(hub.store, 'publisher', ['publisher'])).authorization };
  const publish = async (site: string, name: string, file: Uint8Array) => {
    const res = await fetch(`${url}/api/publications?site=${site}&name=${name}&kind=git`, {
      method: 'POST',
      headers: admin,
      body: new Uint8Array(file),
    });
    expect(res.status).toBe(201);
    return ((await res.json()) as { publicationId: string }).publicationId;
  };
  /** The last item of a site's downlink, as relays pull it. */
  const lastItem = async (site: string) => {
    const dl = await fetch(`${url}/v1/bundles?for=${site}`, { headers: auth });
    const batch = decodeBatch(new Uint8Array(await dl.arrayBuffer()));
    if (!batch.ok) throw new Error('bad batch');
    return batch.value.at(-1) as Uint8Array;
  };
  return { hub, publish, lastItem, hubKey: await publicKeyFromText(hub.publicKeyText) };
}

const BOTH = [READS_INLINE_PUBLICATIONS, READS_WIRE2_PUBLICATIONS];

describe('compact publication manifests at the hub', () => {
  it('sends a small file as one signed v2 message to a site that reads it, v1 to one that does not', async () => {
    const { publish, lastItem, hubKey } = await start({
      'ship-7': BOTH,
      'ship-8': [READS_INLINE_PUBLICATIONS],
    });
    const small = randomBytes(600);
    const id = await publish('ship-7,ship-8', 'infra', small);
    const item = await lastItem('ship-7');
    const m = wire2.decodeMessage(item);
    if (!m.ok) throw new Error(m.error.message);
    expect([m.value.kind, m.value.from, m.value.to, m.value.seq]).toEqual([
      'publication',
      0,
      wire2SiteId('ship-7'),
      1,
    ]);
    expect(await wire2.verifyMessage(m.value, hubKey)).toBe(true);
    const manifest = wire2.manifestOfPublication(m.value.body as wire2.PublicationBody, digest);
    expect(manifest).toMatchObject({ bundleId: id, name: 'infra', fileKind: 'git', size: 600 });
    expect(manifest.sha256).toBe(digest(small));
    expect(Buffer.from(manifest.inline ?? []).equals(small)).toBe(true);
    // the manifest and its signature in 114 bytes, where v1's signed bundle took ~360 after brotli
    expect(item.length - small.length).toBe(114);
    // ship-8's agent does not read it: v1's signed inline manifest, as before
    const v1 = decodeBundle(await lastItem('ship-8'));
    if (!v1.ok) throw new Error(v1.error.message);
    const p = decodePayload('blob', v1.value.payload);
    expect(p.ok && Buffer.from(p.value.inline ?? []).equals(small)).toBe(true);
  });

  it("packs a git bundle's heads for a site that reads them, and sends git's own to one that does not (decision 520)", async () => {
    const { publish, lastItem, hubKey } = await start({
      'ship-7': [...BOTH, READS_WIRE2_GIT_HEADS],
      'ship-8': BOTH,
    });
    const bundle = gitBundle();
    const id = await publish('ship-7,ship-8', 'infra', bundle);
    const [packed, plain] = [await lastItem('ship-7'), await lastItem('ship-8')];
    const bodies = [packed, plain].map((item) => {
      const m = wire2.decodeMessage(item);
      if (!m.ok) throw new Error(m.error.message);
      return m.value;
    });
    expect(await wire2.verifyMessage(bodies[0] as wire2.DecodedMessage, hubKey)).toBe(true);
    const [a, b] = bodies.map((m) => m.body as wire2.PublicationBody);
    expect([a?.gitHeads !== undefined, b?.gitHeads]).toEqual([true, undefined]);
    // both read back as the very file git wrote: its sha256 is the publication's
    for (const body of [a, b])
      expect(wire2.manifestOfPublication(body as wire2.PublicationBody, digest)).toMatchObject({
        bundleId: id,
        sha256: digest(bundle),
        size: bundle.length,
      });
    // one prerequisite and one ref: git's 16-byte first line, the blank line, and 20 B per id
    expect(plain.length - packed.length).toBeGreaterThanOrEqual(50);
  });

  it('names a file too large to go inline by sha256 and size', async () => {
    const { publish, lastItem } = await start({ 'ship-7': BOTH });
    const large = randomBytes(10_000);
    const id = await publish('ship-7', 'big', large);
    const m = wire2.decodeMessage(await lastItem('ship-7'));
    if (!m.ok) throw new Error(m.error.message);
    const body = m.value.body as wire2.PublicationBody;
    expect(body.inline).toBeUndefined();
    expect(wire2.manifestOfPublication(body, digest)).toMatchObject({
      bundleId: id,
      sha256: digest(large),
      size: 10_000,
    });
  });

  it('sends v1 to a site where any live agent does not read it (an older agent beside a newer one)', async () => {
    const { hub, publish, lastItem } = await start({ 'ship-7': BOTH });
    const older = await AgentSim.create('ship-7', 'a2', new TestClock());
    await enrol(hub.store, { site: 'ship-7', agent: 'a2', key: await older.publicKeyText() }, Date.now());
    await publish('ship-7', 'infra', randomBytes(300));
    expect(wire2.isWire2Message(await lastItem('ship-7'))).toBe(false);
  });

  it('makes a resend a new message (seconds since the publish as its seq), the same manifest', async () => {
    const key = await generateSigningKeyPair();
    const input = {
      publicationId: '01KB7Z8Q0000000000000000AB',
      name: 'infra',
      fileKind: 'git' as const,
      sha256: digest(Uint8Array.of(1)),
      size: 1,
      sites: ['ship-7'],
      now: 1_764_460_800_000,
      wire2Sites: ['ship-7'],
    };
    const first = (await buildManifests(input, key.privateKey, () => 'unused')).downlink[0]?.bytes;
    const again = (
      await buildManifests({ ...input, sentAt: input.now + 3_600_000 }, key.privateKey, () => 'unused')
    ).downlink[0]?.bytes;
    const [a, b] = [first, again].map((x) => wire2.decodeMessage(x as Uint8Array));
    if (!a?.ok || !b?.ok) throw new Error('not messages');
    expect([a.value.seq, b.value.seq]).toEqual([1, 3601]);
    expect(b.value.body).toEqual(a.value.body);
    expect(Buffer.from(a.value.signature).equals(Buffer.from(b.value.signature))).toBe(false);
  });
});

/** An incremental bundle of one small commit, by the system git. */
function gitBundle(): Uint8Array {
  const dir = mkdtempSync(join(tmpdir(), 'hub-git-'));
  try {
    const git = (...args: string[]) =>
      execFileSync('git', ['-c', 'user.email=hq@example.org', '-c', 'user.name=hq', ...args], {
        cwd: dir,
        encoding: 'utf8',
      }).trim();
    git('init', '-q', '-b', 'main');
    writeFileSync(join(dir, 'main.tf'), 'resource "null_resource" "a" {}\n'.repeat(20));
    git('add', '.');
    git('commit', '-qm', 'main');
    const base = git('rev-parse', 'HEAD');
    writeFileSync(join(dir, 'main.tf'), 'resource "null_resource" "b" {}\n'.repeat(20));
    git('commit', '-qam', 'change');
    git('bundle', 'create', '-q', join(dir, 'inc.bundle'), 'main', `^${base}`);
    return new Uint8Array(readFileSync(join(dir, 'inc.bundle')));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
