import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHopServer, MemoryHopBackend } from '@driftline/hop';
import {
  type BundleHeader,
  encodeBundle,
  encodeUlid,
  generateSigningKeyPair,
  type Priority,
} from '@driftline/protocol';
import { createRelay } from '../src/app.js';
import { parseConfig, type RelayConfigInput, type ResolvedUpstream } from '../src/config.js';
import type { Clock } from '../src/ports/Clock.js';

let counter = 0;
const keys = generateSigningKeyPair();

/** A signed bundle; distinct ids per call. Payload padded with `pad` bytes of heads-free doc name. */
export async function makeBundle(
  over: Partial<BundleHeader> & { priority?: Priority } = {},
): Promise<{ id: string; bytes: Uint8Array }> {
  counter++;
  const rnd = new Uint8Array(10);
  new DataView(rnd.buffer).setUint32(6, counter);
  const id = over.id ?? encodeUlid(1_700_000_000_000 + counter, rnd);
  const header = {
    id,
    kind: 'ack',
    source: 'hub',
    destination: 'hub',
    created: Date.now(),
    lifetimeS: 3600,
    priority: 'status',
    ...over,
  } as BundleHeader & { kind: 'ack' };
  const bytes = await encodeBundle(
    header,
    { agent: 'a1' as never, doc: 'd', heads: [], blobs: [], committedAt: 1 },
    (await keys).privateKey,
  );
  return { id, bytes };
}

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
