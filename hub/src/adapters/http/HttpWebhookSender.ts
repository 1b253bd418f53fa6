import { createHmac } from 'node:crypto';
import type { WebhookSender } from '../../ports/WebhookSender.js';

export const SIGNATURE_HEADER = 'driftline-signature';

/** `sha256=<hex HMAC-SHA256 of the body>`, as the receiver recomputes it with the shared secret. */
export function webhookSignature(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** POSTs JSON bodies signed with HMAC-SHA256 (`Driftline-Signature`); any 2xx is delivered. */
export class HttpWebhookSender implements WebhookSender {
  constructor(
    private readonly secret: string,
    private readonly timeoutMs = 10_000,
  ) {}

  async send(url: string, event: string, body: string) {
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'driftline-event': event,
          [SIGNATURE_HEADER]: webhookSignature(this.secret, body),
        },
        body,
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      await res.arrayBuffer();
      return res.ok ? ({ ok: true } as const) : ({ ok: false, error: `HTTP ${res.status}` } as const);
    } catch (e) {
      return { ok: false as const, error: (e as Error).message };
    }
  }
}
