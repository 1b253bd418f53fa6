import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import * as A from '@automerge/automerge';
import {
  decodeBundle,
  decodePayload,
  PublicationDetailSchema,
  publicKeyFromText,
  verifyBundle,
} from '@driftline/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { loadOrCreateHubKey } from '../src/adapters/fs/hubKey.js';
import { createHub } from '../src/app.js';
import { parseConfig } from '../src/config.js';
import { CONFIRM_WINDOWS } from '../src/core/confirmBy.js';
import { enrol } from '../src/core/enrolment.js';
import { PublicationResends } from '../src/core/publish/PublicationResends.js';
import { keyPath } from '../src/dataDir.js';
import { ulidGen } from '../src/ports/IdGen.js';
import { AgentSim, TestClock } from './agentSim.js';
import { addTestUser } from './users.js';

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0)) await f();
});

/**
 * A publication whose site's agent has not reported it within N contact windows goes down again
 * (decision 300), for an agent that confirms what it receives.
 */
describe('publications the agent has not confirmed', () => {
  async function start() {
    const dir = mkdtempSync(join(tmpdir(), 'hub-pub-resend-'));
    const cfg = parseConfig({ dataDir: dir, uiDir: join(dir, 'no-ui') }, dir, {});
    if (!cfg.ok) throw new Error(cfg.errors.join('; '));
    const clock = new TestClock();
    const hub = await createHub(cfg.config, { clock });
    cleanup.push(async () => {
      await hub.close();
      rmSync(dir, { recursive: true, force: true });
    });
    // ship-7's agent confirms what it receives (its `requests` map) and syncs every 600 s; ship-8's is older.
    const agents: AgentSim[] = [];
    for (const site of ['ship-7', 'ship-8']) {
      const a = await AgentSim.create(site, 'a1', clock);
      await enrol(hub.store, { site, agent: 'a1', key: await a.publicKeyText() }, clock.now());
      if (site === 'ship-7') a.received(null);
      a.plan('prod', 'net');
      await hub.ingest.accept('relay-1', [await a.delta()]);
      agents.push(a);
    }
    const key = await loadOrCreateHubKey(keyPath(dir));
    const resends = new PublicationResends({
      store: hub.store,
      publications: hub.publications,
      clock,
      ids: ulidGen(clock),
      hubPrivateKey: key.privateKey,
    });
    const publish = async (name: string) => {
      const r = await hub.publisher.publish(Readable.from([Buffer.from(name)]), {
        sites: ['ship-7', 'ship-8'],
        name,
        fileKind: 'config',
      });
      if (!r.ok) throw new Error(r.message);
      return r.publication.publicationId;
    };
    const manifests = async (site: string) => {
      const out: { id: string; publicationId: string; supersedes?: string[] }[] = [];
      for (const row of await hub.store.readDownlink(site, 0, 100)) {
        const b = decodeBundle(row.bytes);
        if (!b.ok || b.value.header.kind !== 'blob') continue;
        expect(await verifyBundle(b.value, await publicKeyFromText(key.publicKeyText))).toBe(true);
        const p = decodePayload('blob', b.value.payload);
        if (!p.ok) continue;
        out.push({
          id: b.value.header.id,
          publicationId: p.value.bundleId ?? '',
          ...(p.value.supersedes ? { supersedes: p.value.supersedes } : {}),
        });
      }
      return out;
    };
    const { url } = await hub.hop.listen(0, '127.0.0.1');
    const viewer = { authorization: (await addTestUser(hub.store, 'vic', ['viewer'])).authorization };
    /** `GET /api/publications/:id`: each site's delivery, `unconfirmed` where the hub judges it so. */
    const shown = async (id: string) =>
      PublicationDetailSchema.parse(
        await (await fetch(`${url}/api/publications/${id}`, { headers: viewer })).json(),
      ).deliveries.map((d) => [d.site, d.state, d.unconfirmed ?? false]);
    return { hub, clock, agents, resends, publish, manifests, shown };
  }

  it('sends the manifest again past N contact windows, once per span, with what it supersedes', async () => {
    const { clock, resends, publish, manifests, shown } = await start();
    const first = await publish('cfg');
    clock.advance(1000);
    const second = await publish('cfg'); // supersedes the first at both sites
    expect((await manifests('ship-7')).map((m) => m.publicationId)).toEqual([first, second]);
    const span = CONFIRM_WINDOWS * 600_000;
    clock.advance(span - 1);
    expect(await resends.resendUnconfirmed()).toEqual([]);
    expect(await shown(second)).toEqual([
      ['ship-7', 'queued', false],
      ['ship-8', 'queued', false],
    ]);
    clock.advance(1);
    // The API shows it (ship-8's older agent is never judged).
    expect(await shown(second)).toEqual([
      ['ship-7', 'queued', true],
      ['ship-8', 'queued', false],
    ]);
    const sent = await resends.resendUnconfirmed();
    // ship-7 only (ship-8's agent is older: a relay's pull is its delivery); the first publication is
    // superseded there and not sent again.
    expect(sent.map((u) => [u.publication.publicationId, u.site])).toEqual([[second, 'ship-7']]);
    const again = await manifests('ship-7');
    expect(again.map((m) => m.publicationId)).toEqual([first, second, second]);
    expect(again[2]?.id).not.toBe(again[1]?.id); // a new bundle: relays serve it again
    expect(again[2]?.supersedes).toEqual([first]);
    expect((await manifests('ship-8')).map((m) => m.publicationId)).toEqual([first, second]);
    // Not again within the span; again after it.
    expect(await resends.resendUnconfirmed()).toEqual([]);
    clock.advance(span);
    expect(await resends.resendUnconfirmed()).toHaveLength(1);
  });

  it('sends nothing again once the agent has reported the publication', async () => {
    const { hub, clock, agents, resends, publish } = await start();
    const id = await publish('cfg');
    const a = agents[0] as AgentSim;
    a.doc = A.change(a.doc, (d) => {
      d.bundles = {
        [id]: {
          bundleId: id,
          sha256: 'x',
          name: 'cfg',
          fileKind: 'config',
          size: 3,
          state: 'announced',
          bytes: 0,
          updatedAt: clock.now(),
        },
      };
    });
    await hub.ingest.accept('relay-1', [await a.delta()]);
    clock.advance(10 * CONFIRM_WINDOWS * 600_000);
    expect(await resends.resendUnconfirmed()).toEqual([]);
    expect((await resends.unconfirmed()).list).toEqual([]);
  });
});
