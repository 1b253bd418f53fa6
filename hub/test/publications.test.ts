import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as A from '@automerge/automerge';
import {
  BATCH_CONTENT_TYPE,
  decodeBatch,
  decodeBundle,
  decodePayload,
  encodeBatch,
  MAX_INLINE_PUBLICATION_BYTES,
  PublicationDetailSchema,
  PublicationsResponseSchema,
  publicKeyFromText,
  READS_INLINE_PUBLICATIONS,
  verifyBundle,
} from '@driftline/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { sha256Hex } from '../src/adapters/hop/HubHopBackend.js';
import { createHub } from '../src/app.js';
import { parseConfig } from '../src/config.js';
import { enrol, revoke } from '../src/core/enrolment.js';
import { AgentSim, TestClock } from './agentSim.js';
import { addTestUser } from './users.js';

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0)) await f();
});

async function start() {
  const dir = mkdtempSync(join(tmpdir(), 'hub-publications-'));
  const cfg = parseConfig({ dataDir: dir, uiDir: join(dir, 'no-ui') }, dir, {});
  if (!cfg.ok) throw new Error(cfg.errors.join('; '));
  const clock = new TestClock();
  const hub = await createHub(cfg.config, { clock });
  const { url } = await hub.hop.listen(0, '127.0.0.1');
  await hub.store.commit({
    peers: [{ tokenSha256: sha256Hex('relay-token'), name: 'relay-1', sites: ['*'] }],
  });
  const agents = [];
  for (const site of ['ship-7', 'ship-8']) {
    const a = await AgentSim.create(site, 'a1', clock);
    await enrol(hub.store, { site, agent: 'a1', key: await a.publicKeyText() }, clock.now());
    agents.push(a);
  }
  cleanup.push(async () => {
    await hub.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const admin = { authorization: (await addTestUser(hub.store, 'publisher', ['publisher'])).authorization };
  return { hub, url, clock, agents, dir, admin };
}

const auth = { authorization: 'Bearer relay-token' };

describe('publications at the hub', () => {
  it('publishes a streamed file to every site, signed, at bulk, served with Range', async () => {
    const { hub, url, admin } = await start();
    const file = randomBytes(300_000);
    const sha = createHash('sha256').update(file).digest('hex');
    const res = await fetch(`${url}/api/publications?site=all&name=aws-mirror&kind=provider-mirror`, {
      method: 'POST',
      headers: admin,
      body: file,
    });
    expect(res.status).toBe(201);
    const detail = PublicationDetailSchema.parse(await res.json());
    expect(detail).toMatchObject({ sha256: sha, size: file.length, sites: ['ship-7', 'ship-8'] });
    expect(detail.deliveries.map((d) => d.state)).toEqual(['queued', 'queued']);

    const dl = await fetch(`${url}/v1/bundles?for=ship-7`, { headers: auth });
    const batch = decodeBatch(new Uint8Array(await dl.arrayBuffer()));
    if (!batch.ok) throw new Error('bad batch');
    const [bytes] = batch.value;
    const b = decodeBundle(bytes as Uint8Array);
    if (!b.ok) throw new Error('bad bundle');
    expect(b.value.header).toMatchObject({ kind: 'blob', priority: 'bulk', source: 'hub' });
    expect(await verifyBundle(b.value, await publicKeyFromText(hub.publicKeyText))).toBe(true);
    const m = decodePayload('blob', b.value.payload);
    expect(m.ok && m.value).toMatchObject({
      sha256: sha,
      bundleId: detail.publicationId,
      fileKind: 'provider-mirror',
    });

    const part = await fetch(`${url}/v1/blobs/${sha}`, { headers: { ...auth, range: 'bytes=100000-' } });
    expect(part.status).toBe(206);
    expect(Buffer.from(await part.arrayBuffer()).equals(file.subarray(100_000))).toBe(true);

    const list = PublicationsResponseSchema.parse(
      await (await fetch(`${url}/api/publications?site=ship-8`, { headers: admin })).json(),
    );
    expect(list.publications.map((x) => x.publicationId)).toEqual([detail.publicationId]);
  });

  it('carries a small file inside its signed manifest only when asked, and never one over the cap', async () => {
    const { hub, url, admin } = await start();
    const hubKey = await publicKeyFromText(hub.publicKeyText);
    const manifestOf = async (query: string, file: Buffer) => {
      const res = await fetch(`${url}/api/publications?${query}`, {
        method: 'POST',
        headers: admin,
        body: new Uint8Array(file),
      });
      expect(res.status).toBe(201);
      const dl = await fetch(`${url}/v1/bundles?for=ship-7`, { headers: auth });
      const batch = decodeBatch(new Uint8Array(await dl.arrayBuffer()));
      if (!batch.ok) throw new Error('bad batch');
      const b = decodeBundle(batch.value.at(-1) as Uint8Array);
      if (!b.ok) throw new Error('bad bundle');
      expect(await verifyBundle(b.value, hubKey)).toBe(true);
      const m = decodePayload('blob', b.value.payload);
      if (!m.ok) throw new Error(m.error.message);
      return m.value;
    };
    const small = randomBytes(600);
    const inline = await manifestOf('site=ship-7&name=infra&kind=git&inline=1', small);
    expect(Buffer.from(inline.inline ?? []).equals(small)).toBe(true);
    expect(inline.sha256).toBe(createHash('sha256').update(small).digest('hex'));
    // Only what a site reads: no content type, no list of target sites (the header names the site).
    expect(inline.contentType).toBeUndefined();
    expect(inline.sites).toBeUndefined();
    expect((await manifestOf('site=ship-7&name=infra2&kind=git', small)).inline).toBeUndefined();
    const large = randomBytes(MAX_INLINE_PUBLICATION_BYTES + 1);
    expect((await manifestOf('site=ship-7&name=infra3&kind=git&inline=1', large)).inline).toBeUndefined();
  });

  it('carries a small file inline by default only to sites whose every agent reads inline manifests', async () => {
    const { url, agents, admin } = await start();
    // ship-7's agent says it reads them (decision 360); ship-8's is older and says nothing
    const [newer, older] = agents as [AgentSim, AgentSim];
    newer.plan('prod', 'net');
    newer.doc = A.change(newer.doc, (d) => {
      if (d.facts) d.facts.reads = [READS_INLINE_PUBLICATIONS];
    });
    older.plan('prod', 'net');
    for (const a of [newer, older]) {
      const post = await fetch(`${url}/v1/bundles`, {
        method: 'POST',
        headers: { ...auth, 'content-type': BATCH_CONTENT_TYPE },
        body: Buffer.from(encodeBatch([await a.delta()])),
      });
      expect(post.status).toBe(200);
    }
    const manifestFor = async (site: string) => {
      const dl = await fetch(`${url}/v1/bundles?for=${site}`, { headers: auth });
      const batch = decodeBatch(new Uint8Array(await dl.arrayBuffer()));
      if (!batch.ok) throw new Error('bad batch');
      const blobs = batch.value
        .map((bytes) => decodeBundle(bytes))
        .flatMap((b) => (b.ok && b.value.header.kind === 'blob' ? [b.value] : []));
      const m = decodePayload('blob', (blobs.at(-1) as { payload: Uint8Array }).payload);
      if (!m.ok) throw new Error(m.error.message);
      return m.value;
    };
    const small = randomBytes(600);
    const res = await fetch(`${url}/api/publications?site=ship-7,ship-8&name=infra&kind=git`, {
      method: 'POST',
      headers: admin,
      body: new Uint8Array(small),
    });
    expect(res.status).toBe(201);
    expect(Buffer.from((await manifestFor('ship-7')).inline ?? []).equals(small)).toBe(true);
    const fetched = await manifestFor('ship-8');
    expect(fetched.inline).toBeUndefined();
    expect(fetched.sites).toEqual(['ship-7', 'ship-8']);
    // `inline=0`: never, even to an agent that reads it
    const never = await fetch(`${url}/api/publications?site=ship-7&name=infra2&kind=git&inline=0`, {
      method: 'POST',
      headers: admin,
      body: new Uint8Array(small),
    });
    expect(never.status).toBe(201);
    expect((await manifestFor('ship-7')).inline).toBeUndefined();
  });

  it('inlines to a site only while every live agent there reads inline manifests', async () => {
    const { hub, url, clock, agents, admin } = await start();
    const reader = agents[0] as AgentSim;
    const older = await AgentSim.create('ship-7', 'a2', clock);
    await enrol(hub.store, { site: 'ship-7', agent: 'a2', key: await older.publicKeyText() }, clock.now());
    reader.plan('prod', 'net');
    reader.doc = A.change(reader.doc, (d) => {
      if (d.facts) d.facts.reads = [READS_INLINE_PUBLICATIONS];
    });
    older.plan('prod', 'dns');
    for (const a of [reader, older]) {
      const post = await fetch(`${url}/v1/bundles`, {
        method: 'POST',
        headers: { ...auth, 'content-type': BATCH_CONTENT_TYPE },
        body: Buffer.from(encodeBatch([await a.delta()])),
      });
      expect(post.status).toBe(200);
    }
    const small = randomBytes(300);
    const inlineOf = async (name: string) => {
      const res = await fetch(`${url}/api/publications?site=ship-7&name=${name}&kind=git`, {
        method: 'POST',
        headers: admin,
        body: new Uint8Array(small),
      });
      expect(res.status).toBe(201);
      const dl = await fetch(`${url}/v1/bundles?for=ship-7`, { headers: auth });
      const batch = decodeBatch(new Uint8Array(await dl.arrayBuffer()));
      if (!batch.ok) throw new Error('bad batch');
      const b = decodeBundle(batch.value.at(-1) as Uint8Array);
      if (!b.ok) throw new Error('bad bundle');
      const m = decodePayload('blob', b.value.payload);
      if (!m.ok) throw new Error(m.error.message);
      return m.value.inline;
    };
    // a2 says nothing (an older agent): the site gets the file by fetch
    expect(await inlineOf('one')).toBeUndefined();
    // once a2 is revoked, every live agent of ship-7 reads inline manifests
    await revoke(hub.store, 'ship-7', 'a2', clock.now());
    expect(Buffer.from((await inlineOf('two')) ?? []).equals(small)).toBe(true);
  });

  it('refuses an inline value other than 0 or 1, naming the query key', async () => {
    const { url, admin } = await start();
    const res = await fetch(`${url}/api/publications?site=ship-7&name=x&kind=git&inline=yes`, {
      method: 'POST',
      headers: admin,
      body: 'x',
    });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain('inline');
  });

  it('refuses a publication to a malformed site and an unknown kind', async () => {
    const { url, admin } = await start();
    const bad = await fetch(`${url}/api/publications?site=Not_A_Site&name=x`, {
      method: 'POST',
      headers: admin,
      body: 'x',
    });
    expect(bad.status).toBe(400);
    const kind = await fetch(`${url}/api/publications?site=ship-7&name=x&kind=script`, {
      method: 'POST',
      headers: admin,
      body: 'x',
    });
    expect(kind.status).toBe(400);
  });

  it('records the delivery state an agent reports in its document', async () => {
    const { hub, url, agents, admin } = await start();
    const r = await hub.publisher.publish(
      (await import('node:stream')).Readable.from([Buffer.from('hello')]),
      { sites: ['ship-7'], name: 'cfg', fileKind: 'config' },
    );
    if (!r.ok) throw new Error(r.message);
    const a = agents[0] as AgentSim;
    a.plan('prod', 'net');
    a.doc = A.change(a.doc, (d) => {
      d.bundles = {
        [r.publication.publicationId]: {
          bundleId: r.publication.publicationId,
          sha256: r.publication.sha256,
          name: 'cfg',
          fileKind: 'config',
          size: 5,
          state: 'placed',
          bytes: 5,
          updatedAt: 1,
        },
      };
    });
    const post = await fetch(`${url}/v1/bundles`, {
      method: 'POST',
      headers: { ...auth, 'content-type': BATCH_CONTENT_TYPE },
      body: Buffer.from(encodeBatch([await a.delta()])),
    });
    expect(post.status).toBe(200);
    const detail = PublicationDetailSchema.parse(
      await (
        await fetch(`${url}/api/publications/${r.publication.publicationId}`, { headers: admin })
      ).json(),
    );
    expect(detail.deliveries).toMatchObject([{ site: 'ship-7', agent: 'a1', state: 'placed', bytes: 5 }]);
    // The list carries the same per-site rows, so the dashboard draws publication × site from one request.
    const list = PublicationsResponseSchema.parse(
      await (await fetch(`${url}/api/publications?site=ship-7`, { headers: admin })).json(),
    );
    expect(list.publications[0]?.deliveries).toEqual(detail.deliveries);
    expect((await fetch(`${url}/api/publications/nope`, { headers: admin })).status).toBe(404);
  });

  it('supersedes an earlier publication of the same name and kind, per site, and names it in the manifest', async () => {
    const { hub, url, agents, admin } = await start();
    const { Readable } = await import('node:stream');
    const pub = async (sites: string[], body: string, name = 'cfg', fileKind = 'config' as const) => {
      const r = await hub.publisher.publish(Readable.from([Buffer.from(body)]), { sites, name, fileKind });
      if (!r.ok) throw new Error(r.message);
      return r.publication.publicationId;
    };
    const first = await pub(['ship-7', 'ship-8'], 'v1');
    const otherKind = await pub(['ship-7'], 'v1', 'cfg', 'file' as 'config');
    // The agent at ship-7 had already placed the first one.
    const a = agents[0] as AgentSim;
    a.plan('prod', 'net');
    a.doc = A.change(a.doc, (d) => {
      d.bundles = {
        [first]: {
          bundleId: first,
          sha256: 'x',
          name: 'cfg',
          fileKind: 'config',
          size: 2,
          state: 'placed',
          bytes: 2,
          updatedAt: 1,
        },
      };
    });
    const post = async () =>
      fetch(`${url}/v1/bundles`, {
        method: 'POST',
        headers: { ...auth, 'content-type': BATCH_CONTENT_TYPE },
        body: Buffer.from(encodeBatch([await a.delta()])),
      });
    expect((await post()).status).toBe(200);

    const second = await pub(['ship-7'], 'v2');
    const detail = async (id: string) =>
      PublicationDetailSchema.parse(
        await (await fetch(`${url}/api/publications/${id}`, { headers: admin })).json(),
      );
    const d1 = await detail(first);
    expect(d1.deliveries.map((d) => [d.site, d.state])).toEqual([
      ['ship-7', 'superseded'],
      ['ship-8', 'queued'], // not targeted by the second publication: still live there
    ]);
    expect(d1.deliveries[0]).toMatchObject({ agent: 'a1', bytes: 2 });
    expect(d1.deliveries[0]?.reason).toContain(second);
    expect(d1.stateCounts).toEqual({ superseded: 1, queued: 1 });
    // Another kind under the same name is another thing.
    expect((await detail(otherKind)).deliveries.map((d) => d.state)).toEqual(['queued']);

    // The ship-7 manifest of the second names the first; nothing else does.
    const dl = await fetch(`${url}/v1/bundles?for=ship-7`, { headers: auth });
    const batch = decodeBatch(new Uint8Array(await dl.arrayBuffer()));
    if (!batch.ok) throw new Error('bad batch');
    const manifests = batch.value.flatMap((bytes) => {
      const b = decodeBundle(bytes);
      if (!b.ok) throw new Error('bad bundle');
      if (b.value.header.kind !== 'blob') return []; // the acks of the agent's reports
      const m = decodePayload('blob', b.value.payload);
      if (!m.ok) throw new Error('bad manifest');
      return [m.value];
    });
    expect(manifests.map((m) => [m.bundleId, m.supersedes])).toEqual([
      [first, undefined],
      [otherKind, undefined],
      [second, [first]],
    ]);

    // A report from an agent that has not heard yet does not bring the superseded one back.
    a.doc = A.change(a.doc, (d) => {
      if (d.bundles?.[first]) d.bundles[first].updatedAt = 2;
    });
    expect((await post()).status).toBe(200);
    expect((await detail(first)).deliveries[0]).toMatchObject({ state: 'superseded', agent: 'a1' });

    // A third supersedes only the second: the first is superseded already.
    const third = await pub(['ship-7'], 'v3');
    const dl3 = decodeBatch(
      new Uint8Array(await (await fetch(`${url}/v1/bundles?for=ship-7`, { headers: auth })).arrayBuffer()),
    );
    if (!dl3.ok) throw new Error('bad batch');
    const blobs = dl3.value.map((x) => decodeBundle(x)).filter((b) => b.ok && b.value.header.kind === 'blob');
    const last = blobs[blobs.length - 1];
    if (!last?.ok) throw new Error('bad bundle');
    const m3 = decodePayload('blob', last.value.payload);
    expect(m3.ok && [m3.value.bundleId, m3.value.supersedes]).toEqual([third, [second]]);
  });

  it('publishes from the command line', async () => {
    const { dir, hub } = await start();
    writeFileSync(join(dir, 'hub.yaml'), `dataDir: ${dir}\n`);
    writeFileSync(join(dir, 'f.bin'), 'abc');
    const { execFileSync } = await import('node:child_process');
    const out = execFileSync(
      join(__dirname, '../bin/hub.js'),
      [
        'publication',
        'publish',
        '--site',
        'ship-8',
        '--name',
        'f',
        '--json',
        '--config',
        join(dir, 'hub.yaml'),
        join(dir, 'f.bin'),
      ],
      { encoding: 'utf8' },
    );
    const d = PublicationDetailSchema.parse(JSON.parse(out));
    expect(d.sha256).toBe(createHash('sha256').update('abc').digest('hex'));
    expect(readFileSync(join(dir, 'blobs', d.sha256), 'utf8')).toBe('abc');
    const [entry] = await hub.store.listAudit({ limit: 1 });
    expect(entry).toMatchObject({ actor: 'cli', via: 'cli', action: 'publication.publish', outcome: 'ok' });
    expect(entry?.target).toContain(d.publicationId);
  });
});
