import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHopServer, MemoryHopBackend } from '@driftline/hop';
import type { HopClient } from '@driftline/hop/client';
import type { wire2 } from '@driftline/protocol';
import { until as untilState } from '@driftline/protocol/testing';
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

/** Time between two looks of {@link until} (and of {@link registerWhenHeard}), ms. */
const LOOK_MS = 10;

/**
 * Polls `cond` until true and fails loudly, naming `what`, if it never is (`@driftline/protocol/testing`'s
 * `until`). `ms` is what the looks would take on an idle machine (`ms / 10` looks, 10 ms apart): a bound in
 * count, which a loaded machine makes longer, never shorter.
 */
export function until(
  cond: () => boolean | Promise<boolean>,
  ms = 10_000,
  what = 'condition',
): Promise<void> {
  return untilState(cond, what, { looks: Math.max(1, Math.ceil(ms / LOOK_MS)), everyMs: LOOK_MS });
}

/**
 * Registers an agent's key at a relay; one that has not heard from its upstream yet says so (503): asked
 * again, up to 1,000 times 10 ms apart, then this throws rather than hand a 503 on as an answer.
 */
export async function registerWhenHeard(client: HopClient, reg: wire2.Wire2Registration) {
  let r = await client.registerWire2(reg);
  for (let i = 0; i < 1_000 && !r.ok && r.status === 503; i++) {
    await new Promise((ok) => setTimeout(ok, LOOK_MS));
    r = await client.registerWire2(reg);
  }
  if (!r.ok && r.status === 503)
    throw new Error('never reached: the relay never heard from its upstream (registration 503 1,001 times)');
  return r;
}

export const upstreamOf = (name: string, url: string, token: string): ResolvedUpstream => ({
  name,
  url,
  token,
  plan: { windows: [] },
});
