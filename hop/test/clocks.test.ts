import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BATCH_CONTENT_TYPE, encodeBatch, exchangeSample } from '@driftline/protocol';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHopServer, type HopServer, MemoryHopBackend } from '../src/index.js';
import { makeBundle } from '../src/testing.js';

const TOKEN = 'secret-token';
let backend: MemoryHopBackend;
let hop: HopServer;
let url: string;
// The server's clock runs 90 s behind the test's.
const SERVER_BEHIND_MS = 90_000;

beforeEach(async () => {
  backend = new MemoryHopBackend({ name: 'ground-1' });
  backend.addToken(TOKEN, { name: 'ship-lan', sites: ['ship-7'] });
  hop = createHopServer(backend, {
    uploads: { directory: mkdtempSync(join(tmpdir(), 'hop-clock-')) },
    now: () => Date.now() - SERVER_BEHIND_MS,
  });
  ({ url } = await hop.listen());
});
afterEach(() => hop.close());

const post = async (headers: Record<string, string>) => {
  const a = await makeBundle();
  return fetch(`${url}/v1/bundles`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': BATCH_CONTENT_TYPE, ...headers },
    body: encodeBatch([a.bytes]) as BodyInit,
  });
};

describe('exchange times and source clocks', () => {
  it('stamps its receive and reply times on the answer to a request that says when it was sent', async () => {
    const t0 = Date.now();
    const r = await fetch(`${url}/v1/health`, { headers: { 'driftline-sent': String(t0) } });
    const t3 = Date.now();
    const t1 = Number(r.headers.get('driftline-received'));
    const t2 = Number(r.headers.get('driftline-replied'));
    const s = exchangeSample(t0, t1, t2, t3);
    expect(s).not.toBeNull();
    expect(Math.abs((s?.offsetMs ?? 0) - SERVER_BEHIND_MS)).toBeLessThanOrEqual((s?.uncertaintyMs ?? 0) + 1);
    // An old client's request is answered as before.
    const old = await fetch(`${url}/v1/health`);
    expect(old.headers.get('driftline-received')).toBeNull();
  });

  it('composes each listed source’s clock with the posting peer’s own, and knows nothing of the rest', async () => {
    const r = await post({
      'driftline-sent': String(Date.now()),
      'driftline-clock': '90000;u=20',
      'driftline-source-clocks': 'ship-7/a1=420000;u=2000, ship-7/a2=trusted',
    });
    expect(r.status).toBe(200);
    expect(r.headers.get('driftline-replied')).not.toBeNull();
    const clocks = backend.lastClocks;
    expect(clocks?.('ship-7/a1')).toEqual({ offsetMs: 510_000, uncertaintyMs: 2020 });
    expect(clocks?.('ship-7/a2')).toMatchObject({ offsetMs: 0, uncertaintyMs: 0, trusted: true });
    expect(clocks?.('ship-7/a3')).toBeNull();
  });

  it('remembers the peer’s own clock from an earlier request, and ignores a malformed report', async () => {
    await fetch(`${url}/v1/bundles?for=ship-7`, {
      headers: { authorization: `Bearer ${TOKEN}`, 'driftline-clock': '-5;u=3' },
    });
    await post({ 'driftline-clock': 'soon', 'driftline-source-clocks': 'ship-7/a1=100;u=10' });
    expect(backend.lastClocks?.('ship-7/a1')).toEqual({ offsetMs: 95, uncertaintyMs: 13 });
  });

  it('has no estimate for a source when the peer never reported its own clock', async () => {
    await post({ 'driftline-source-clocks': 'ship-7/a1=100;u=10' });
    expect(backend.lastClocks?.('ship-7/a1')).toBeNull();
  });
});
