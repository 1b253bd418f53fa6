import { createServer } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { seededRandom } from '../core/rng.js';
import { VirtualTime } from './VirtualTime.js';
import { WorldLink } from './WorldLink.js';
import { type Dispatch, WorldNetwork, worldUrl } from './WorldNetwork.js';

const START = Date.UTC(2026, 0, 1);

/** A node that answers after holding the request `hold` ms of its own (virtual) time, like a held pull. */
function holdingNode(holdMs: number) {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end(`${req.method} ${req.url} ${body} at ${Date.now() - START}`);
      }, holdMs);
    });
  });
  const dispatch: Dispatch = (req, res) => {
    server.emit('request', req, res);
  };
  return dispatch;
}

describe('the world network on the world clock', () => {
  const time = new VirtualTime();
  afterEach(() => time.uninstall());

  it('carries an exchange over a link in exactly its delays, however long, without a socket', async () => {
    time.install(START);
    const net = new WorldNetwork(seededRandom(1));
    net.attach('hub', holdingNode(30_000));
    net.connect(
      'relay',
      'hub',
      new WorldLink(
        'relay>hub',
        { uplink: { delayMs: 12 * 60_000 }, downlink: { delayMs: 12 * 60_000 } },
        START,
      ),
    );
    let answer = '';
    let at = 0;
    void net
      .transport('relay')
      .request(`${worldUrl('hub')}/v1/x?y=1`, { method: 'POST', body: 'hello' })
      .then(async (r) => {
        answer = await r.text();
        at = Date.now() - START;
      });
    await time.until(() => answer !== '', 3_600_000);
    // 12 min up, 30 s held at the hub, 12 min down: on the world's clock, to the millisecond
    expect(answer).toBe(`POST /v1/x?y=1 hello at ${12 * 60_000 + 30_000}`);
    expect(at).toBe(24 * 60_000 + 30_000);
  });

  it('refuses while a refusing link is down and hangs a cut one until the caller gives up', async () => {
    time.install(START);
    const net = new WorldNetwork(seededRandom(2));
    net.attach('hub', holdingNode(0));
    const link = new WorldLink(
      'a>hub',
      { schedule: { upMs: 60_000, periodMs: 120_000, offsetMs: 60_000 }, whenDown: 'refuse' },
      START,
    );
    net.connect('a', 'hub', link);
    await expect(net.transport('a').request(`${worldUrl('hub')}/`, { method: 'GET' })).rejects.toMatchObject({
      code: 'ECONNREFUSED',
    });
    await time.run(60_000);
    const ok = await Promise.all([
      net.transport('a').request(`${worldUrl('hub')}/`, { method: 'GET' }),
      time.run(1),
    ]);
    expect(ok[0].status).toBe(200);
    link.cut();
    let outcome = '';
    net
      .transport('a')
      .request(`${worldUrl('hub')}/`, { method: 'GET', signal: AbortSignal.timeout(45_000) })
      .then(
        () => {
          outcome = 'answered';
        },
        (e: Error) => {
          outcome = `${e.name} at ${Date.now() - START}`;
        },
      );
    await time.until(() => outcome !== '', 600_000);
    expect(outcome).toBe(`TimeoutError at ${60_001 + 45_000}`);
  });

  it('draws the same passages from the same seed', async () => {
    const run = async (seed: number) => {
      time.install(START);
      const net = new WorldNetwork(seededRandom(seed));
      net.attach('hub', holdingNode(0));
      net.connect(
        'a',
        'hub',
        new WorldLink('a>hub', { uplink: { delayMs: 100, jitterMs: 900 } }, START, {
          lossRate: 0.3,
          answerLossRate: 0.1,
          duplicateRate: 0.1,
        }),
      );
      const seen: string[] = [];
      for (let i = 0; i < 20; i++)
        net
          .transport('a')
          .request(`${worldUrl('hub')}/${i}`, { method: 'GET' })
          .then(
            async (r) => seen.push(`${(await r.text()).split(' ').slice(1).join(' ')}`),
            (e: { code: string }) => seen.push(`${i} ${e.code} at ${Date.now() - START}`),
          );
      await time.run(10_000);
      time.uninstall();
      return { seen, counts: net.counts };
    };
    const a = await run(7);
    const b = await run(7);
    expect(a).toEqual(b);
    expect(a.seen).toHaveLength(20);
    expect(a.counts.lost).toBeGreaterThan(0);
  });

  it('carries a body as it goes on a link that streams bodies: the server sees the upload open, and can cut it', async () => {
    time.install(START);
    const net = new WorldNetwork(seededRandom(3));
    const seen: string[] = [];
    let cut = false;
    net.attach('relay', (req, res) => {
      seen.push(`headers at ${Date.now() - START}`);
      let got = 0;
      req.on('data', (c: Buffer) => {
        got += c.length;
        // the server gives up on it half-way (a revoked token's PATCH)
        if (got >= 32 * 1024 && !cut) {
          cut = true;
          seen.push(`cut at ${Date.now() - START} after ${got} bytes`);
          req.destroy();
          res.destroy();
        }
      });
    });
    // 64 kB at 8 kbit/s (1 kB/s): 64 s on the way; the headers (the world counts 200 bytes) after 100 ms of
    // delay and their own 200 ms
    const link = new WorldLink('a>relay', { uplink: { delayMs: 100, bandwidthBps: 8000 } }, START);
    link.streamsBodies = true;
    net.connect('a', 'relay', link);
    let outcome = '';
    void net
      .transport('a')
      .request(`${worldUrl('relay')}/v1/uploads/x`, { method: 'PATCH', body: new Uint8Array(64 * 1024) })
      .then(
        (r) => {
          outcome = `answered ${r.status}`;
        },
        (e: { code: string }) => {
          outcome = `${e.code} at ${Date.now() - START}`;
        },
      );
    await time.until(() => outcome !== '', 120_000);
    // 16 kB pieces of 16.384 s each: the second one makes 32 kB
    const at = 300 + 2 * 16_384;
    expect(seen).toEqual(['headers at 300', `cut at ${at} after ${32 * 1024} bytes`]);
    expect(outcome).toBe(`ECONNRESET at ${at}`);
  });

  it('drops a link: its exchanges under way end as resets, others go on, and a refusing cut refuses until healed', async () => {
    time.install(START);
    const net = new WorldNetwork(seededRandom(4));
    net.attach('hub', holdingNode(10_000));
    const link = new WorldLink('a>hub', { uplink: { delayMs: 50 }, downlink: { delayMs: 50 } }, START);
    net.connect('a', 'hub', link);
    net.connect(
      'b',
      'hub',
      new WorldLink('b>hub', { uplink: { delayMs: 50 }, downlink: { delayMs: 50 } }, START),
    );
    const outcome: Record<string, string> = {};
    const send = (from: string, name: string) =>
      net
        .transport(from)
        .request(`${worldUrl('hub')}/${name}`, { method: 'GET' })
        .then(
          (r) => {
            outcome[name] = `${r.status} at ${Date.now() - START}`;
          },
          (e: { code: string }) => {
            outcome[name] = `${e.code} at ${Date.now() - START}`;
          },
        );
    void send('a', 'a1');
    void send('b', 'b1');
    await time.run(1_000);
    link.cut('refuse');
    expect(net.reset('a', 'hub')).toBe(1);
    void send('a', 'a2');
    await time.run(300);
    link.heal();
    void send('a', 'a3');
    await time.until(() => Object.keys(outcome).length === 4, 60_000);
    expect(outcome).toEqual({
      a1: 'ECONNRESET at 1000',
      a2: 'ECONNREFUSED at 1000',
      b1: '200 at 10100',
      a3: '200 at 11400',
    });
    expect(net.counts.cut).toBe(1);
  });
});
