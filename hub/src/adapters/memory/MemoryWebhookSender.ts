import type { WebhookSender } from '../../ports/WebhookSender.js';

/**
 * Webhooks delivered in memory, for tests: every send is recorded in `sent` and answers delivered,
 * unless `fail` made its URL fail (as an error status or an unreachable receiver does over HTTP).
 * The same answers as `HttpWebhookSender` (both pass `runWebhookSenderContract`); it signs nothing.
 */
export class MemoryWebhookSender implements WebhookSender {
  /** Bodies delivered, in order. */
  readonly sent: { url: string; event: string; body: string }[] = [];
  private readonly failing = new Map<string, string>();

  /** Every later send to `url` fails with `error` (`HTTP 500`, `fetch failed`…); null delivers again. */
  fail(url: string, error: string | null): void {
    if (error === null) this.failing.delete(url);
    else this.failing.set(url, error);
  }

  async send(url: string, event: string, body: string) {
    const error = this.failing.get(url);
    if (error !== undefined) return { ok: false as const, error };
    this.sent.push({ url, event, body });
    return { ok: true as const };
  }
}
