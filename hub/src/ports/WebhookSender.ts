/** Delivers one webhook body (the adapter signs it with HMAC and POSTs it). */
export interface WebhookSender {
  send(url: string, event: string, body: string): Promise<{ ok: true } | { ok: false; error: string }>;
}
