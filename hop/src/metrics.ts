import { Counter, Gauge, Registry } from 'prom-client';

/** The hop server's own metrics; services register theirs on the same registry. */
export interface HopMetrics {
  registry: Registry;
  requests: Counter<'route' | 'status'>;
  bytesIn: Counter<'peer'>;
  bytesOut: Counter<'peer'>;
  uploadsInProgress: Gauge;
  connectionsRefused: Counter;
  revokedClosed: Counter;
  heldOpen: Gauge;
  wire2Messages: Counter<'kind' | 'peer'>;
}

/** `openNow`: held downlink pulls and tus PATCHes open now (the server's `OpenCredentials`). */
export function createHopMetrics(
  registry: Registry = new Registry(),
  openNow: () => number = () => 0,
): HopMetrics {
  return {
    registry,
    requests: new Counter({
      name: 'driftline_hop_requests_total',
      help: 'hop API requests by route and status',
      labelNames: ['route', 'status'],
      registers: [registry],
    }),
    bytesIn: new Counter({
      name: 'driftline_hop_bytes_in_total',
      help: 'request body bytes received from each peer (bundles and uploads)',
      labelNames: ['peer'],
      registers: [registry],
    }),
    wire2Messages: new Counter({
      name: 'driftline_hop_v2_messages_total',
      help: 'hop v2 messages taken (signature verified), by kind and the peer the sender acts as (decision 495)',
      labelNames: ['kind', 'peer'],
      registers: [registry],
    }),
    bytesOut: new Counter({
      name: 'driftline_hop_bytes_out_total',
      help: 'downlink bytes sent to each peer',
      labelNames: ['peer'],
      registers: [registry],
    }),
    uploadsInProgress: new Gauge({
      name: 'driftline_hop_uploads_in_progress',
      help: 'tus uploads created and neither finished nor terminated since start',
      registers: [registry],
    }),
    connectionsRefused: new Counter({
      name: 'driftline_hop_connections_refused_total',
      help: 'connections answered 429 and closed because their client address had too many open',
      registers: [registry],
    }),
    heldOpen: new Gauge({
      name: 'driftline_hop_held_requests_open',
      help: 'held downlink pulls and tus PATCHes open now (their tokens are checked again every second)',
      registers: [registry],
      collect() {
        this.set(openNow());
      },
    }),
    revokedClosed: new Counter({
      name: 'driftline_hop_revoked_requests_closed_total',
      help: 'held downlink pulls and tus uploads closed because their token was revoked or rotated out while they were open',
      registers: [registry],
    }),
  };
}
