import { Readable } from 'node:stream';
import type { HttpRequest, HttpResponse, HttpStack } from 'tus-js-client';
import type { HopTransport } from './hopTransport.js';

/** Most bytes of one tus request body read into memory from a stream (the upload's chunk size is below). */
const BODY_CAP = 256 * 1024 * 1024;

/**
 * tus-js-client's HTTP stack over a {@link HopTransport}, so a client given a transport (the world's)
 * uploads through it too. Each PATCH's body (a Buffer, or a stream slice) is read whole and sent as one
 * request; progress is reported when the request is answered.
 */
export class TransportHttpStack implements HttpStack {
  constructor(private readonly transport: HopTransport) {}

  createRequest(method: string, url: string): HttpRequest {
    return new TransportRequest(this.transport, method, url);
  }

  getName(): string {
    return 'TransportHttpStack';
  }
}

class TransportRequest implements HttpRequest {
  private readonly headers: Record<string, string> = {};
  private readonly aborter = new AbortController();
  private progress: (sent: number) => void = () => {};

  constructor(
    private readonly transport: HopTransport,
    private readonly method: string,
    private readonly url: string,
  ) {}

  getMethod(): string {
    return this.method;
  }

  getURL(): string {
    return this.url;
  }

  setHeader(header: string, value: string): void {
    this.headers[header.toLowerCase()] = value;
  }

  getHeader(header: string): string | undefined {
    return this.headers[header.toLowerCase()];
  }

  setProgressHandler(handler: (bytesSent: number) => void): void {
    this.progress = handler;
  }

  async send(body: unknown): Promise<HttpResponse> {
    const bytes = await bodyBytes(body);
    const res = await this.transport.request(this.url, {
      method: this.method,
      headers: this.headers,
      ...(bytes ? { body: bytes } : {}),
      signal: this.aborter.signal,
    });
    const text = await res.text();
    if (bytes) this.progress(bytes.length);
    return new TransportResponse(res, text);
  }

  async abort(): Promise<void> {
    this.aborter.abort();
  }

  getUnderlyingObject(): unknown {
    return this.aborter;
  }
}

class TransportResponse implements HttpResponse {
  constructor(
    private readonly res: Response,
    private readonly body: string,
  ) {}

  getStatus(): number {
    return this.res.status;
  }

  getHeader(header: string): string | undefined {
    return this.res.headers.get(header) ?? undefined;
  }

  getBody(): string {
    return this.body;
  }

  getUnderlyingObject(): unknown {
    return this.res;
  }
}

async function bodyBytes(body: unknown): Promise<Uint8Array | undefined> {
  if (body === null || body === undefined) return undefined;
  if (body instanceof Uint8Array) return body;
  if (body instanceof Readable) {
    const parts: Buffer[] = [];
    let size = 0;
    for await (const chunk of body) {
      const b = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
      size += b.length;
      if (size > BODY_CAP) throw new Error(`a tus request body over ${BODY_CAP} bytes`);
      parts.push(b);
    }
    return Buffer.concat(parts);
  }
  throw new Error(`a tus request body of an unexpected kind (${typeof body})`);
}
