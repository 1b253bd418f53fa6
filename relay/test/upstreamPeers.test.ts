import { Writable } from 'node:stream';
import type { HopClient } from '@driftline/hop/client';
import type { PeerInfo } from '@driftline/protocol';
import { decodeBatch } from '@driftline/protocol';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { createRelay } from '../src/app.js';
import { UpstreamPeers } from '../src/upstreamPeers.js';
import { makeBundle, relayConfig, startTerminal, until, upstreamOf } from './helpers.js';

describe('the sites a relay acts for, as its upstream says', () => {
  it('pulls the downlink of a site only the upstream names, and warns of a relay.yaml site the upstream refuses with the command that fixes it', {
    timeout: 30_000,
  }, async () => {
    const term = await startTerminal('other');
    term.backend.addToken('relay-token', { name: 'relay-1', sites: ['ship-7', 'ship-9'] });
    const lines: { msg: string; sites?: string[] }[] = [];
    const sink = new Writable({
      write(chunk, _e, done) {
        lines.push(JSON.parse(String(chunk)));
        done();
      },
    });
    const cfg = relayConfig({ name: 'relay-1', sites: ['ship-7', 'ship-8'] });
    const relay = createRelay(cfg, [upstreamOf('hub', term.url, 'relay-token')], {
      logger: pino({ level: 'info' }, sink),
    });
    const { url } = await relay.start();
    try {
      const ack = await makeBundle({
        kind: 'ack',
        source: 'hub',
        destination: { site: 'ship-9' as never },
        priority: 'control',
      });
      term.backend.enqueueDownlink('ship-9', ack.bytes);
      const agent = relay.tokens.add('ship-9', ['ship-9']);
      await until(
        async () => {
          const r = await fetch(`${url}/v1/bundles?for=ship-9`, {
            headers: { authorization: `Bearer ${agent}` },
          });
          const b = decodeBatch(new Uint8Array(await r.arrayBuffer()));
          return b.ok && b.value.length === 1;
        },
        10_000,
        "ship-9's downlink at the relay",
      );
      expect(relay.peers.sites()).toEqual(['ship-7', 'ship-8', 'ship-9']);
      const warned = lines.filter((l) => l.msg.startsWith('relay.yaml sites ship-8 are not this relay'));
      expect(warned).toHaveLength(1);
      expect(warned[0]?.msg).toContain('hub peer sites relay-1 --sites ship-7,ship-8,ship-9');
    } finally {
      await relay.stop();
      await term.hop.close();
    }
  });
});

describe("the relay's minute upstream (decision 610)", () => {
  /** An upstream whose status answer says who the relay is (a hub since decision 610), or says nothing (204). */
  const upstream = (statusTells: boolean) => {
    const info: PeerInfo = { name: 'relay-1', sites: ['ship-7'] };
    const calls = { peer: 0, status: 0 };
    const client = {
      peerInfo: async () => {
        calls.peer++;
        return { ok: true as const, value: info };
      },
      postStatus: async () => {
        calls.status++;
        return { ok: true as const, value: statusTells ? info : null };
      },
    } as unknown as HopClient;
    return { calls, client };
  };
  const peersOver = (client: HopClient) =>
    new UpstreamPeers({
      configured: [],
      upstreams: [{ name: 'hub', client }],
      custody: { queueStats: () => [], usage: () => ({ total: 0 }) } as never,
      version: 'test',
      now: () => 0,
      log: pino({ level: 'silent' }),
    });

  it('asks who it is once when the status answer says so, and every minute when it does not (an older hub)', async () => {
    const newer = upstream(true);
    const older = upstream(false);
    const a = peersOver(newer.client);
    const b = peersOver(older.client);
    for (let i = 0; i < 3; i++) {
      await a.beat();
      await b.beat();
    }
    expect(newer.calls).toEqual({ peer: 1, status: 3 });
    expect(older.calls).toEqual({ peer: 3, status: 3 });
    expect(a.sites()).toEqual(['ship-7']);
    expect(b.sites()).toEqual(['ship-7']);
  });
});
