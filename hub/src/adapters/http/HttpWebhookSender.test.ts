import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { webhookSignature } from './HttpWebhookSender.js';

describe('webhook signature', () => {
  it('is the HMAC-SHA256 of the exact body with the shared secret', () => {
    const body = '{"event":"new-drift"}';
    const expected = createHmac('sha256', 'a-secret-of-16-chars').update(body).digest('hex');
    expect(webhookSignature('a-secret-of-16-chars', body)).toBe(`sha256=${expected}`);
    expect(webhookSignature('a-secret-of-16-chars', `${body} `)).not.toBe(`sha256=${expected}`);
  });
});
