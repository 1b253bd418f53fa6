import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  HttpWebhookSender,
  SIGNATURE_HEADER,
  webhookSignature,
} from '../src/adapters/http/HttpWebhookSender.js';
import { MemoryWebhookSender } from '../src/adapters/memory/MemoryWebhookSender.js';
import { runWebhookSenderContract } from './webhookSenderContract.js';

const SECRET = 'a-secret-of-16-chars';

runWebhookSenderContract('HttpWebhookSender', async () => {
  const got: { event: string; body: string }[] = [];
  let status: number | null = null;
  const server = createServer(async (req, res) => {
    const parts: Buffer[] = [];
    for await (const c of req) parts.push(c as Buffer);
    const body = Buffer.concat(parts).toString('utf8');
    const signed = req.headers[SIGNATURE_HEADER] === webhookSignature(SECRET, body);
    const json = req.headers['content-type'] === 'application/json' && req.method === 'POST';
    if (status === null && signed && json) got.push({ event: String(req.headers['driftline-event']), body });
    res.writeHead(status ?? (signed ? 204 : 401)).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  let open = true;
  const close = async () => {
    if (open) await new Promise<void>((r) => server.close(() => r()));
    open = false;
  };
  return {
    sender: new HttpWebhookSender(SECRET),
    url,
    received: () => got,
    refuse: (s) => {
      status = s;
    },
    cut: close,
    done: close,
  };
});

runWebhookSenderContract('MemoryWebhookSender', async () => {
  const sender = new MemoryWebhookSender();
  const url = 'http://receiver.test/hook';
  return {
    sender,
    url,
    received: () => sender.sent.filter((s) => s.url === url).map(({ event, body }) => ({ event, body })),
    refuse: (s) => sender.fail(url, s === null ? null : `HTTP ${s}`),
    cut: async () => sender.fail(url, 'fetch failed'),
    done: async () => {},
  };
});
