import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { BATCH_CONTENT_TYPE, encodeBatch } from '@driftline/protocol';
import pino from 'pino';
import { sha256Hex } from '../src/adapters/http/credentials.js';
import { createHub, type Hub } from '../src/app.js';
import { parseConfig } from '../src/config.js';
import { enrol } from '../src/core/enrolment.js';
import { AgentSim, TestClock } from './agentSim.js';

/**
 * A real hub on port 0 (one listener unless `listen` says otherwise) with a relay peer token, one
 * enrolled agent at `ship-7` that has planned `prod/net`, and the hub's log lines kept in `logs`.
 */
export async function startHub(extra: object = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'hub-auth-'));
  const cfg = parseConfig(
    { dataDir: dir, uiDir: join(dir, 'no-ui'), listen: { host: '127.0.0.1', port: 0 }, ...extra },
    dir,
    {},
  );
  if (!cfg.ok) throw new Error(cfg.errors.join('; '));
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      logs.push(String(chunk));
      done();
    },
  });
  const clock = new TestClock();
  const hub: Hub = await createHub(cfg.config, { clock, logger: pino({ level: 'info' }, sink) });
  const urls = await hub.listen();
  await hub.store.commit({
    peers: [{ tokenSha256: sha256Hex('relay-token'), name: 'relay-1', sites: ['*'] }],
  });
  const agent = await AgentSim.create('ship-7', 'a1', clock);
  const e = await enrol(
    hub.store,
    { site: 'ship-7', agent: 'a1', key: await agent.publicKeyText() },
    clock.now(),
  );
  if (!e.ok) throw new Error(e.error);
  const relay = { authorization: 'Bearer relay-token' };
  const runId = agent.plan('prod', 'net', 'clean');
  const pushed = await fetch(`${urls.hop}/v1/bundles`, {
    method: 'POST',
    headers: { ...relay, 'content-type': BATCH_CONTENT_TYPE },
    body: encodeBatch([await agent.delta()]) as Uint8Array<ArrayBuffer>,
  });
  if (pushed.status !== 200) throw new Error(`push answered ${pushed.status}`);
  return {
    hub,
    dir,
    clock,
    logs,
    relay,
    runId,
    /** The enrolled agent (`ship-7/a1`), its keys and document. */
    agent,
    url: urls.api,
    hopUrl: urls.hop,
    close: async () => {
      await hub.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export type TestHub = Awaited<ReturnType<typeof startHub>>;

/** A plan request for the cell the fixture's agent plans. */
export const PLAN = { site: 'ship-7', environment: 'prod', component: 'net' };

/** `fetch` of a JSON write. */
export const postJson = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(url, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
