import type { PlainInit } from './plainRequest.js';

/**
 * What carries a hop client's exchanges: one request, one `Response` (its body decoded as fetch would).
 * The default is {@link PlainTransport}'s sockets (plus h2c for v2 where stated); the deterministic world
 * gives its own, which carries the exchange over its simulated links to a node's request listener
 * (docs/decisions/540-deterministic-world.md). A client given a transport sends everything through it:
 * v1 and v2 requests, held pulls, tus uploads and Range fetches.
 */
export interface HopTransport {
  request(url: string, init: PlainInit): Promise<Response>;
  /** Releases what it holds (kept-alive connections); the client calls it once, when aborted. */
  close(): void;
}
