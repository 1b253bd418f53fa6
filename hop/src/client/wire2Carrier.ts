import { H2cRefusedError, H2cTransport } from './h2cTransport.js';
import type { HopTransport } from './hopTransport.js';
import type { PlainInit } from './plainRequest.js';

/** After h2c was refused on the way to an upstream, it is tried again this much later (as v2 itself). */
const TRY_AGAIN_MS = 86_400_000;

/** What carries a client's hop v2 exchanges now, and why HTTP/1.1 when h2c was refused on the way. */
export interface Wire2CarrierState {
  carrier: 'h2c' | 'http/1.1';
  reason?: string;
}

/**
 * Picks the carrier of hop v2 exchanges with one upstream (issue 46): h2c when the upstream's v2
 * registration stated it, the client allows it and the URL is `http:`; else HTTP/1.1 (TLS upstreams keep
 * HTTP/1.1: h2 by ALPN is not built). When h2c is refused on the way (an HTTP/1.1-only proxy answers the
 * preface with something that is not HTTP/2), the exchange goes again on HTTP/1.1, and so do the next for
 * a day; `onChange` hears each switch (for `edge-agent status`).
 */
export class Wire2Carrier {
  private h2: H2cTransport | null = null;
  private stated = false;
  private refusedAt = Number.NEGATIVE_INFINITY;
  private reason: string | undefined;

  constructor(
    private readonly url: string,
    private readonly plain: HopTransport,
    private readonly allowed: boolean,
    private readonly onChange: (s: Wire2CarrierState) => void = () => {},
    private readonly now: () => number = Date.now,
  ) {}

  /** Whether to tell the upstream, on registration, that this client reads `h2c`. */
  asks(): boolean {
    return this.allowed && this.url.startsWith('http:');
  }

  /** What the upstream's registration answer said. */
  noteStated(h2c: boolean): void {
    this.stated = h2c && this.asks();
    this.note();
  }

  /** The carrier of the next exchange. */
  state(): Wire2CarrierState {
    const h2c = this.stated && this.now() - this.refusedAt >= TRY_AGAIN_MS;
    return h2c
      ? { carrier: 'h2c' }
      : { carrier: 'http/1.1', ...(this.reason ? { reason: this.reason } : {}) };
  }

  async request(url: string, init: PlainInit): Promise<Response> {
    if (this.state().carrier === 'http/1.1') return this.plain.request(url, init);
    this.h2 ??= new H2cTransport();
    try {
      const res = await this.h2.request(url, init);
      if (this.reason) {
        // tried again a day later, and spoken this time (the proxy went): said so in status
        this.reason = undefined;
        this.note();
      }
      return res;
    } catch (e) {
      if (!(e instanceof H2cRefusedError)) throw e;
      // nothing reached the upstream as HTTP/2: the same exchange on HTTP/1.1, and the next ones too
      this.refusedAt = this.now();
      this.reason = e.message;
      this.note();
      return this.plain.request(url, init);
    }
  }

  /** An exchange stalled: the next goes on a new h2c connection (`H2cTransport.retire`). */
  retire(): void {
    this.h2?.retire(new URL(this.url).origin);
  }

  close(): void {
    this.h2?.close();
  }

  private note(): void {
    this.onChange(this.state());
  }
}
