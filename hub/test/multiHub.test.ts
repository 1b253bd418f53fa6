import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import * as A from '@automerge/automerge';
import { BATCH_CONTENT_TYPE, encodeBatch } from '@driftline/protocol';
import { afterAll, expect, it, vi } from 'vitest';
import { stringify } from 'yaml';
import { sha256Hex } from '../src/adapters/http/credentials.js';
import { PgDatabase } from '../src/adapters/postgres/PgDatabase.js';
import { PostgresHubStore } from '../src/adapters/postgres/PostgresHubStore.js';
import { enrol } from '../src/core/enrolment.js';
import { AgentSim } from './agentSim.js';
import { BIN, openEvents, type Proc, Procs } from './multiHubProcesses.js';
import { describePg } from './postgres.js';
import { addTestUser } from './users.js';

vi.setConfig({ testTimeout: 600_000, hookTimeout: 180_000 });
const run = promisify(execFile);
const procs = new Procs();
afterAll(() => procs.stopAll());

/**
 * `fn`'s first truthy answer: asked now, then again on each `event` (a dashboard's next frame: the hub's
 * own news that its store changed), never on a timer; the test's timeout bounds it. The event is armed
 * before each ask, so a change while asking is not missed.
 */
async function whenever<T>(
  what: string,
  event: () => Promise<unknown>,
  fn: () => Promise<T | undefined | false>,
): Promise<T> {
  for (;;) {
    const next = event();
    next.catch(() => {});
    const v = await fn();
    if (v) return v;
    await next.catch((e: unknown) => {
      throw new Error(`gave up waiting for ${what}: ${String(e)}`);
    });
  }
}

const freePort = async () => {
  const { createServer } = await import('node:net');
  return new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
};

describePg('two hub processes on one PostgreSQL behind one relay', (server) => {
  it('loses nothing, stores nothing twice, and keeps every dashboard updating when one hub is SIGKILLed mid-ingest', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'driftline-multihub-'));
    const url = await server().createDatabase();
    // The hubs listen on port 0 and say where in their log (no port picked here that another test
    // could take before the hub binds it); the relay's port is picked only after they are up.
    const hubUrls: string[] = [];
    const hubUrl = (i: 0 | 1) => hubUrls[i] as string;
    // Both hubs share one data directory (the hub key that signs acks, the CSRF key, blobs) and the database.
    const hubConfig = (i: 0 | 1) => {
      const path = join(dir, `hub-${i}.yaml`);
      const store = { kind: 'postgres', url, passwordFile: join(server().dir, 'pw') };
      writeFileSync(
        path,
        stringify({ listen: { port: 0 }, dataDir: './hub-data', sweepIntervalS: 1, store }),
      );
      return path;
    };
    const configs = [hubConfig(0), hubConfig(1)];
    await run(process.execPath, [BIN.hub, 'init', '--config', configs[0] as string], { timeout: 120_000 });

    // Peers, a user and the agents go straight into the shared store.
    const db = new PgDatabase({ url, password: server().password });
    const store = new PostgresHubStore(db);
    const sites = ['ship-7', 'ship-8'];
    const agents = [
      await AgentSim.create('ship-7', 'a1', Date),
      await AgentSim.create('ship-7', 'a2', Date),
      await AgentSim.create('ship-8', 'a1', Date),
    ];
    try {
      await store.commit({ peers: [{ tokenSha256: sha256Hex('relay-token'), name: 'relay-1', sites }] });
      for (const a of agents) {
        const e = await enrol(
          store,
          { site: a.site, agent: a.agent, key: await a.publicKeyText() },
          Date.now(),
        );
        if (!e.ok) throw new Error(e.error);
      }
      const { authorization } = await addTestUser(store, 'dashboard', ['admin']);

      const hubs: Proc[] = configs.map((c, i) =>
        procs.start(BIN.hub, ['run', '--config', c], join(dir, `hub-${i}.log`)),
      );
      // each hub's log line saying where it listens (it is serving then)
      for (const [i, hub] of hubs.entries())
        hubUrls[i] = (JSON.parse(await hub.said(/"msg":"hub listening"/)) as { url: string }).url;
      for (const i of [0, 1] as const) expect((await fetch(`${hubUrl(i)}/v1/health`)).ok).toBe(true);
      const ports = [0, 0, await freePort()] as const;

      const relayConfig = join(dir, 'relay.yaml');
      writeFileSync(
        relayConfig,
        stringify({
          name: 'relay-1',
          dataDir: './relay-data',
          listen: { port: ports[2] },
          sites,
          // The relay fails over down this list: hub 0 first, hub 1 while hub 0 does not answer.
          upstreams: [0, 1].map((i) => ({ url: hubUrl(i as 0 | 1), token: 'relay-token' })),
          forward: {
            idleMs: 100,
            pullIntervalMs: 500,
            backoffBaseMs: 100,
            backoffMaxMs: 1000,
            requestTimeoutMs: 10_000,
          },
        }),
      );
      const tokens = new Map<string, string>();
      for (const site of sites) {
        const out = await run(process.execPath, [
          BIN.relay,
          'token',
          'add',
          site,
          '--config',
          relayConfig,
          '--json',
        ]);
        tokens.set(site, JSON.parse(out.stdout).token);
      }
      const relay = procs.start(BIN.relay, ['run', '--config', relayConfig], join(dir, 'relay.log'));
      const relayUrl = `http://127.0.0.1:${ports[2]}`;
      await relay.said(/"msg":"relay listening"/);
      expect((await fetch(`${relayUrl}/v1/health`)).ok).toBe(true);

      // One dashboard on each hub.
      const onKilled = openEvents(hubUrl(0), authorization);
      const onSurvivor = openEvents(hubUrl(1), authorization);
      await Promise.all([onKilled.open, onSurvivor.open]);

      /** Each agent plans its cell `prod/net-<agent>` once and sends what is new to the relay. */
      const planned = new Map<string, string[]>();
      const round = async (n: number) => {
        for (const a of agents) {
          const comp = `net-${a.agent}`;
          const runId = a.plan('prod', comp, n % 3 === 0 ? 'drift' : 'clean');
          planned.set(`${a.site}/${comp}`, [...(planned.get(`${a.site}/${comp}`) ?? []), runId]);
          const r = await fetch(`${relayUrl}/v1/bundles`, {
            method: 'POST',
            headers: { authorization: `Bearer ${tokens.get(a.site)}`, 'content-type': BATCH_CONTENT_TYPE },
            body: encodeBatch([await a.delta()]) as Uint8Array<ArrayBuffer>,
          });
          expect(r.status).toBe(200);
          a.acked = A.getHeads(a.doc); // the relay holds it in custody: the agent moves on
        }
      };
      const runsAt = async (hub: 0 | 1, key: string) => {
        const [site, comp] = key.split('/');
        const r = await fetch(`${hubUrl(hub)}/api/cells/${site}/prod/${comp}/runs?limit=100`, {
          headers: { authorization },
        });
        if (!r.ok) return undefined;
        return ((await r.json()) as { runs: { runId: string }[] }).runs.map((x) => x.runId);
      };

      for (let n = 0; n < 3; n++) await round(n);
      // Hub 0 has started taking them: the relay is mid-way when it is killed.
      await whenever(
        'hub 0 ingesting',
        onKilled.next,
        async () => ((await runsAt(0, 'ship-7/net-a1')) ?? []).length > 0,
      );
      // Its dashboard has had a frame to resume from: frames are flushed per client every 250 ms (decision
      // 402), so a kill right after the first ingest could come before any reached it.
      await whenever('a live frame at the dashboard on hub 0', onKilled.next, async () => onKilled.lastId());
      for (let n = 3; n < 5; n++) await round(n);
      await procs.stop(hubs[0] as Proc, 'SIGKILL');
      for (let n = 5; n < 8; n++) await round(n);

      // Nothing lost, nothing twice: every run of every cell at the surviving hub, once.
      for (const [key, ids] of planned) {
        const got = await whenever(`all runs of ${key} at hub 1`, onSurvivor.next, async () => {
          const at = await runsAt(1, key);
          return at && at.length >= ids.length ? at : undefined;
        });
        expect([...got].sort()).toEqual([...ids].sort());
      }

      // The dashboard on the surviving hub kept receiving: runs of the rounds after the kill reached it.
      const late = [...planned.values()].map((ids) => ids.at(-1) as string);
      await whenever('the surviving dashboard sees the last runs', onSurvivor.next, async () =>
        late.every((id) => onSurvivor.frames.some((f) => f.data.run?.runId === id)),
      );
      // The one on the killed hub was cut; it resumes at the other hub from its last id, without a reset.
      await onKilled.ended;
      const last = onKilled.lastId();
      expect(last).toBeDefined();
      const resumed = openEvents(hubUrl(1), authorization, last);
      await resumed.open;
      const expected = onSurvivor.frames.filter(
        (f) => Number(f.id.split('-')[1]) > Number(last?.split('-')[1]),
      );
      expect(expected.length).toBeGreaterThan(0);
      // Live frames are coalesced per client (decision 402): the survivor's are some of the log's ids,
      // the resumed replay has every one after `last`, in order.
      const seq = (id: string) => Number(id.split('-')[1]);
      const newest = seq(expected.at(-1)?.id ?? '');
      await whenever('the resumed dashboard is caught up', resumed.next, async () =>
        resumed.frames.some((f) => seq(f.id) >= newest),
      );
      expect(resumed.frames.some((f) => f.event === 'reset')).toBe(false);
      const resumedIds = resumed.frames.map((f) => f.id);
      expect(expected.map((f) => f.id).filter((id) => !resumedIds.includes(id))).toEqual([]);
      expect(resumedIds.map(seq)).toEqual([...resumedIds.map(seq)].sort((a, b) => a - b));
      expect(onKilled.frames.length).toBeGreaterThan(0);
      expect(onKilled.frames.every((f) => f.id.split('-')[0] === expected[0]?.id.split('-')[0])).toBe(true);
      onSurvivor.close();
      resumed.close();
      // Exactly one hub leads the sweeps now: the survivor (it took over or led all along).
      // it says so as it takes the lead (at start, or once hub 0's session is gone)
      await hubs[1]?.said(/"msg":"this hub leads now/);
      const m = await fetch(`${hubUrl(1)}/metrics`, { headers: { authorization } });
      expect(await m.text()).toMatch(/^hub_leader 1$/m);
    } finally {
      await procs.stopAll();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
