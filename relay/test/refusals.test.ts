import { createHash, randomBytes } from 'node:crypto';
import { HopClient } from '@driftline/hop/client';
import { afterEach, describe, expect, it } from 'vitest';
import { startRelay } from './helpers.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

describe('quiet refusals are counted (issue 29)', () => {
  it('counts and refuses an upload whose bytes do not hash to the sha256 it announced, keeping nothing', async () => {
    const { relay, url } = await startRelay({}, []);
    closers.push(() => relay.stop());
    const token = relay.tokens.add('ship-7', ['ship-7']);
    const client = new HopClient({ url, token });
    const data = randomBytes(10_000);
    const sha = createHash('sha256').update(data).digest('hex');
    const flipped = Buffer.from(data);
    flipped[5000] = (flipped[5000] as number) ^ 0xff;
    const bad = await client.upload({ sha256: sha, size: flipped.length, body: flipped });
    expect(bad).toMatchObject({ ok: false, code: 'checksum-mismatch', status: 460 });
    expect(relay.custody.blobs.pending('any', 10)).toEqual([]);
    const text = await (
      await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${token}` } })
    ).text();
    expect(text).toContain('driftline_relay_refusals_total{peer="ship-7",reason="checksum-mismatch"} 1');
    // The genuine bytes are taken afterwards: a refusal does not poison the hash.
    expect(await client.upload({ sha256: sha, size: data.length, body: data })).toMatchObject({ ok: true });
    expect(relay.custody.blobs.pending('any', 10).map((b) => b.sha256)).toEqual([sha]);
  });
});
