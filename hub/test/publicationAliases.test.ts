import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  LegacyBundleDetailSchema,
  LegacyBundlesResponseSchema,
  PublicationDetailSchema,
} from '@driftline/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { createHub } from '../src/app.js';
import { parseConfig } from '../src/config.js';
import { enrol } from '../src/core/enrolment.js';
import { AgentSim, TestClock } from './agentSim.js';
import { addTestUser } from './users.js';

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0)) await f();
});

async function start(extra: Record<string, unknown> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'hub-publication-aliases-'));
  const cfg = parseConfig({ dataDir: dir, uiDir: join(dir, 'no-ui'), ...extra }, dir, {});
  if (!cfg.ok) throw new Error(cfg.errors.join('; '));
  const clock = new TestClock();
  const hub = await createHub(cfg.config, { clock });
  const { url } = await hub.hop.listen(0, '127.0.0.1');
  const a = await AgentSim.create('ship-7', 'a1', clock);
  await enrol(hub.store, { site: 'ship-7', agent: 'a1', key: await a.publicKeyText() }, clock.now());
  cleanup.push(async () => {
    await hub.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const publisher = { authorization: (await addTestUser(hub.store, 'pat', ['publisher'])).authorization };
  const viewer = { authorization: (await addTestUser(hub.store, 'vera', ['viewer'])).authorization };
  return { hub, url, dir, publisher, viewer };
}

const deprecation = (res: Response) => [res.headers.get('deprecation'), res.headers.get('link')];
const SUCCESSOR = ['@1795651200', '</api/publications>; rel="successor-version"'];

describe('/api/bundles, the deprecated name of /api/publications', () => {
  it('answers as before, with the old field names, and says where to go', async () => {
    const { url, publisher } = await start();
    const posted = await fetch(`${url}/api/bundles?site=ship-7&name=old.txt`, {
      method: 'POST',
      headers: publisher,
      body: 'hello',
    });
    expect(posted.status).toBe(201);
    expect(deprecation(posted)).toEqual(SUCCESSOR);
    const body = (await posted.json()) as Record<string, unknown>;
    expect(Object.keys(body)[0]).toBe('bundleId');
    expect(body).not.toHaveProperty('publicationId');
    const old = LegacyBundleDetailSchema.parse(body);

    const list = await fetch(`${url}/api/bundles?site=ship-7`, { headers: publisher });
    expect(deprecation(list)).toEqual(SUCCESSOR);
    const listed = LegacyBundlesResponseSchema.parse(await list.json());
    expect(listed.bundles.map((b) => b.bundleId)).toEqual([old.bundleId]);

    const one = await fetch(`${url}/api/bundles/${old.bundleId}`, { headers: publisher });
    expect(deprecation(one)).toEqual(SUCCESSOR);
    expect(LegacyBundleDetailSchema.parse(await one.json())).toEqual(old);

    // The same publication under the new name, with the new field names and no deprecation.
    const now = await fetch(`${url}/api/publications/${old.bundleId}`, { headers: publisher });
    expect(deprecation(now)).toEqual([null, null]);
    const { publicationId, ...rest } = PublicationDetailSchema.parse(await now.json());
    const { bundleId, ...oldRest } = old;
    expect([publicationId, rest]).toEqual([bundleId, oldRest]);

    const missing = await fetch(`${url}/api/bundles/nope`, { headers: publisher });
    expect(missing.status).toBe(404);
    expect(deprecation(missing)).toEqual(SUCCESSOR);
  });

  it('refuses the same hostile input on both names, storing nothing', async () => {
    const { hub, url, publisher } = await start({ api: { maxUploadBytes: 1000 } });
    for (const base of ['/api/publications', '/api/bundles']) {
      const post = (query: string, body: BodyInit) =>
        fetch(`${url}${base}?${query}`, { method: 'POST', headers: publisher, body });
      expect((await post('site=Not_A_Site&name=x', 'x')).status, base).toBe(400);
      expect((await post('site=ship-7&name=x&kind=script', 'x')).status, base).toBe(400);
      expect((await post('site=ship-7', 'x')).status, base).toBe(400);
      expect((await post('site=ship-7&name=big', Buffer.alloc(5000))).status, base).toBe(413);
      const detail = await fetch(`${url}${base}/${'%2e%2e%2f'.repeat(8)}etc`, { headers: publisher });
      expect(detail.status, base).toBeGreaterThanOrEqual(400);
      expect(detail.status, base).toBeLessThan(500);
    }
    expect(await hub.publications.listPublications()).toEqual([]);
  });

  it('asks for the same roles on both names and audits both as publication.publish', async () => {
    const { hub, url, viewer } = await start();
    for (const base of ['/api/publications', '/api/bundles']) {
      expect((await fetch(`${url}${base}`)).status, base).toBe(401);
      expect((await fetch(`${url}${base}`, { headers: viewer })).status, base).toBe(200);
      const post = await fetch(`${url}${base}?site=ship-7&name=x`, {
        method: 'POST',
        headers: viewer,
        body: 'x',
      });
      expect(post.status, base).toBe(403);
    }
    expect(await hub.publications.listPublications()).toEqual([]);
    const audit = await hub.store.listAudit({ limit: 2 });
    expect(audit.map((e) => [e.action, e.outcome])).toEqual([
      ['publication.publish', 'denied'],
      ['publication.publish', 'denied'],
    ]);
  });

  it('keeps `hub bundle` as a hidden alias of `hub publication`, stdout as before', async () => {
    const { dir } = await start();
    writeFileSync(join(dir, 'hub.yaml'), `dataDir: ${dir}\n`);
    writeFileSync(join(dir, 'f.bin'), 'abc');
    const { spawnSync } = await import('node:child_process');
    const hub = (args: string[]) =>
      spawnSync(join(__dirname, '../bin/hub.js'), [...args, '--config', join(dir, 'hub.yaml')], {
        encoding: 'utf8',
      });
    const old = hub(['bundle', 'publish', '--site', 'ship-7', '--name', 'f', '--json', join(dir, 'f.bin')]);
    expect(old.status).toBe(0);
    expect(old.stderr).toContain('deprecated, use `hub publication`');
    const detail = LegacyBundleDetailSchema.parse(JSON.parse(old.stdout));
    const listed = hub(['bundle', 'list', '--json']);
    expect(LegacyBundlesResponseSchema.parse(JSON.parse(listed.stdout)).bundles[0]?.bundleId).toBe(
      detail.bundleId,
    );
    const now = hub(['publication', 'list', '--json']);
    expect(now.stderr).toBe('');
    expect(JSON.parse(now.stdout)).toMatchObject({ publications: [{ publicationId: detail.bundleId }] });
    const help = spawnSync(join(__dirname, '../bin/hub.js'), ['--help'], { encoding: 'utf8' }).stdout;
    expect(help).toMatch(/^ {2}publication\b/m);
    expect(help).not.toMatch(/^ {2}bundle\b/m);
    // five CLI runs: a bound for a hang (one ran past 30 s in a clean clone's whole run)
  }, 120_000);
});
