/**
 * Delivers one webhook body (the adapter signs it with HMAC and POSTs it). Adapters: `HttpWebhookSender`,
 * `MemoryWebhookSender` (tests); both pass `runWebhookSenderContract`.
 */
export interface WebhookSender {
  send(url: string, event: string, body: string): Promise<{ ok: true } | { ok: false; error: string }>;
}
