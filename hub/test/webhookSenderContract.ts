import { afterEach, describe, expect, it } from 'vitest';
import type { WebhookSender } from '../src/ports/WebhookSender.js';

/**
 * A sender and one receiver: `received` lists what reached it (for HTTP, only bodies whose signature
 * checked out), `refuse` makes it answer an error status, `cut` takes it away.
 */
export interface WebhookLink {
  sender: WebhookSender;
  url: string;
  received(): { event: string; body: string }[];
  refuse(status: number | null): void;
  cut(): Promise<void>;
  done(): Promise<void>;
}

/**
 * What every `WebhookSender` adapter promises (ports/WebhookSender.ts): `HttpWebhookSender` against a
 * real receiver on port 0, and `MemoryWebhookSender`, both run it.
 */
export function runWebhookSenderContract(name: string, setup: () => Promise<WebhookLink>): void {
  describe(`WebhookSender contract: ${name}`, () => {
    const links: WebhookLink[] = [];
    afterEach(async () => {
      for (const l of links.splice(0)) await l.done();
    });
    const open = async () => {
      const l = await setup();
      links.push(l);
      return l;
    };

    it('delivers the exact body with its event, once per send', async () => {
      const l = await open();
      const body = JSON.stringify({ event: 'new-drift', site: 'ship-7', note: 'ünïcode' });
      expect(await l.sender.send(l.url, 'new-drift', body)).toEqual({ ok: true });
      expect(await l.sender.send(l.url, 'cell-stale', '{}')).toEqual({ ok: true });
      expect(l.received()).toEqual([
        { event: 'new-drift', body },
        { event: 'cell-stale', body: '{}' },
      ]);
    });

    it('answers not delivered, naming the status, when the receiver answers an error', async () => {
      const l = await open();
      l.refuse(500);
      expect(await l.sender.send(l.url, 'new-drift', '{}')).toEqual({ ok: false, error: 'HTTP 500' });
      l.refuse(null);
      expect(await l.sender.send(l.url, 'new-drift', '{}')).toEqual({ ok: true });
      expect(l.received()).toHaveLength(1);
    });

    it('answers not delivered, with a reason, when the receiver cannot be reached', async () => {
      const l = await open();
      await l.cut();
      const r = await l.sender.send(l.url, 'new-drift', '{}');
      expect(r).toEqual({ ok: false, error: expect.any(String) });
      expect(!r.ok && r.error.length).toBeGreaterThan(0);
    });
  });
}
