import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createHub, type Hub } from '../src/app.js';
import { parseConfig } from '../src/config.js';
import { startHub } from './hubFixture.js';
import { addTestUser } from './users.js';

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0)) await f();
});

/** Opens `url` (an `/api/events` URL) and reads until `done(text)` holds; answers the text read. */
async function readEvents(
  url: string,
  headers: Record<string, string>,
  done: (text: string) => boolean,
): Promise<string> {
  const ctrl = new AbortController();
  const res = await fetch(url, { headers, signal: ctrl.signal });
  expect(res.status).toBe(200);
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  let text = '';
  while (!done(text)) {
    const { value, done: ended } = await reader.read();
    if (ended) break;
    text += new TextDecoder().decode(value);
  }
  ctrl.abort();
  return text;
}

const ids = (text: string) => [...text.matchAll(/^id: (.+)$/gm)].map((m) => m[1] as string);

describe('event ids carry the hub’s epoch', () => {
  it('replays within an epoch, and resets a client whose id is from before a restart', async () => {
    const h = await startHub();
    let hub: Hub = h.hub;
    cleanup.push(async () => {
      await hub.close();
      rmSync(h.dir, { recursive: true, force: true });
    });
    const admin = { authorization: (await addTestUser(hub.store, 'ada', ['admin'])).authorization };
    const epoch = hub.events.epoch;
    expect(epoch).toMatch(/^[0-9a-z]+$/);

    const replay = await readEvents(`${h.url}/api/events`, { ...admin, 'last-event-id': `${epoch}-0` }, (t) =>
      t.includes('event: cell-updated'),
    );
    expect(ids(replay)[0]).toBe(`${epoch}-1`);
    expect(replay).not.toContain('event: reset');
    const seen = ids(replay).at(-1) as string;

    // The same data directory, a new process run: a new epoch.
    await hub.close();
    const cfg = parseConfig(
      { dataDir: h.dir, uiDir: join(h.dir, 'no-ui'), listen: { host: '127.0.0.1', port: 0 } },
      h.dir,
      {},
    );
    if (!cfg.ok) throw new Error(cfg.errors.join('; '));
    hub = await createHub(cfg.config);
    const { api } = await hub.listen();
    expect(hub.events.epoch).not.toBe(epoch);
    hub.events.publish({ type: 'reset', reason: 'behind' }); // any event: the new run has ids of its own

    const reset = /event: reset\ndata: .*\n\n/;
    const after = await readEvents(`${api}/api/events`, { ...admin, 'last-event-id': seen }, (t) =>
      reset.test(t),
    );
    expect(after).toContain(
      `id: ${hub.events.epoch}-1\nevent: reset\ndata: {"type":"reset","reason":"restarted"}\n\n`,
    );
    const viaQuery = await readEvents(`${api}/api/events?lastEventId=${seen}`, admin, (t) => reset.test(t));
    expect(viaQuery).toContain('"reason":"restarted"');

    const ahead = await readEvents(
      `${api}/api/events`,
      { ...admin, 'last-event-id': `${hub.events.epoch}-99` },
      (t) => reset.test(t),
    );
    expect(ahead).toContain('"reason":"unknown"');
  });
});
