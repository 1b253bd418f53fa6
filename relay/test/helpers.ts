import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHopServer, MemoryHopBackend } from '@driftline/hop';
import { createRelay } from '../src/app.js';
import { parseConfig, type RelayConfigInput, type ResolvedUpstream } from '../src/config.js';
import type { Clock } from '../src/ports/Clock.js';

/** A signed bundle; distinct ids per call (the same fixture hop's own tests use). */
export { makeBundle } from '@driftline/hop/testing';

export const tmp = (p = 'relay-') => mkdtempSync(join(tmpdir(), p));

/** A terminal hop node (stands in for the hub) on 127.0.0.1:0. */
export async function startTerminal(token = 'hub-token') {
  const backend = new MemoryHopBackend({ name: 'hub', role: 'hub' });
  backend.addToken(token, { name: 'relay', sites: ['*'] });
  const hop = createHopServer(backend, { uploads: { directory: tmp('term-') } });
  const { url } = await hop.listen();
  return { backend, hop, url, token };
}

export function relayConfig(over: Partial<RelayConfigInput> = {}) {
  const r = parseConfig({
    name: 'relay-a',
    dataDir: tmp(),
    listen: { port: 0 },
    forward: { idleMs: 50, backoffBaseMs: 10, backoffMaxMs: 100, pullIntervalMs: 50 },
    ...over,
  });
  if (!r.ok) throw new Error(r.errors.join('\n'));
  return r.value;
}

export async function startRelay(
  over: Partial<RelayConfigInput>,
  upstreams: ResolvedUpstream[],
  clock?: Clock,
) {
  const cfg = relayConfig(over);
  const relay = createRelay(cfg, upstreams, { clock });
  const { url } = await relay.start();
  return { relay, url, cfg };
}

/** Polls `cond` until true, bounded by `ms`; never sleeps to wait for behaviour beyond that bound. */
export async function until(
  cond: () => boolean | Promise<boolean>,
  ms = 5000,
  what = 'condition',
): Promise<void> {
  const end = Date.now() + ms;
  for (let i = 0; i < 10_000; i++) {
    if (await cond()) return;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`gave up waiting for ${what}`);
}

export const upstreamOf = (name: string, url: string, token: string): ResolvedUpstream => ({
  name,
  url,
  token,
  plan: { windows: [] },
});
