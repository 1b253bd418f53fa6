import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { BATCH_CONTENT_TYPE, encodeBatch } from '@driftline/protocol';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { createRelay } from '../src/app.js';
import { resolveUpstreams } from '../src/config.js';
import { makeBundle, relayConfig, startTerminal, tmp, until } from './helpers.js';

describe('a replaced upstream token file', () => {
  it('is read again without a restart, logged once, and forwarding goes on with the new token', async () => {
    const term = await startTerminal('old-token');
    const dir = tmp('relay-token-');
    const file = join(dir, 'up.token');
    writeFileSync(file, 'old-token\n');
    const cfg = relayConfig({ sites: ['ship-7'], upstreams: [{ url: term.url, tokenFile: file }] });
    const ups = resolveUpstreams(cfg, {});
    if (!ups.ok) throw new Error(ups.errors.join('; '));
    const lines: { msg: string }[] = [];
    const sink = new Writable({
      write(chunk, _e, done) {
        lines.push(JSON.parse(String(chunk)));
        done();
      },
    });
    const relay = createRelay(cfg, ups.value, { logger: pino({ level: 'info' }, sink) });
    const { url } = await relay.start();
    const agent = relay.tokens.add('ship-7', ['ship-7']);
    const post = async () => {
      const b = await makeBundle();
      await fetch(`${url}/v1/bundles`, {
        method: 'POST',
        headers: { authorization: `Bearer ${agent}`, 'content-type': BATCH_CONTENT_TYPE },
        body: encodeBatch([b.bytes]) as BodyInit,
      });
      return b.id;
    };
    try {
      const first = await post();
      await until(() => term.backend.stored.has(first), 10_000, 'the first bundle upstream');
      // the hub rotated the relay's token with no grace: the old one is refused from now on
      term.backend.removeToken('old-token');
      term.backend.addToken('new-token', { name: 'relay', sites: ['*'] });
      writeFileSync(file, 'new-token\n');
      const second = await post();
      await until(
        () => term.backend.stored.has(second),
        15_000,
        'the second bundle upstream with the new token',
      );
      const third = await post();
      await until(() => term.backend.stored.has(third), 15_000, 'the third bundle upstream');
      expect(lines.filter((l) => l.msg === 'token file changed; using the new token')).toHaveLength(1);
    } finally {
      await relay.stop();
      await term.hop.close();
    }
  });
});
