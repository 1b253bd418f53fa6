import { Writable } from 'node:stream';
import { decodeBatch } from '@driftline/protocol';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { createRelay } from '../src/app.js';
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
