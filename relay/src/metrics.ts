import { statfsSync } from 'node:fs';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { SqliteCustody } from './adapters/sqlite/SqliteCustody.js';
import type { Clock } from './ports/Clock.js';

/** The relay's metrics (issue 5): queues, ages, forwards, expiry, disk. Bytes per peer are hop's. */
export function createRelayMetrics(
  registry: Registry,
  custody: SqliteCustody,
  clock: Clock,
  dataDir: string,
) {
  new Gauge({
    name: 'driftline_relay_queue_depth',
    help: 'bundles held, by destination (hub or site) and priority',
    labelNames: ['destination', 'priority'],
    registers: [registry],
    collect() {
      this.reset();
      for (const s of custody.queueStats(clock.now()))
        this.set({ destination: s.dest, priority: s.priority }, s.count);
    },
  });
  new Gauge({
    name: 'driftline_relay_oldest_queued_seconds',
    help: 'age of the oldest bundle held, by destination',
    labelNames: ['destination'],
    registers: [registry],
    collect() {
      this.reset();
      const oldest = new Map<string, number>();
      for (const s of custody.queueStats(clock.now()))
        oldest.set(s.dest, Math.max(oldest.get(s.dest) ?? 0, s.oldestMs));
      for (const [d, ms] of oldest) this.set({ destination: d }, ms / 1000);
    },
  });
  new Gauge({
    name: 'driftline_relay_disk_free_bytes',
    help: 'free bytes on the data directory filesystem',
    registers: [registry],
    collect() {
      const s = statfsSync(dataDir);
      this.set(s.bavail * s.bsize);
    },
  });
  return {
    forwards: new Counter({
      name: 'driftline_relay_forwards_total',
      help: 'batches forwarded upstream, by upstream and result (ok, failed)',
      labelNames: ['upstream', 'result'],
      registers: [registry],
    }),
    bytesOut: new Counter({
      name: 'driftline_relay_upstream_bytes_out_total',
      help: 'bytes sent to each upstream (compressed batches and blob uploads)',
      labelNames: ['upstream'],
      registers: [registry],
    }),
    expired: new Counter({
      name: 'driftline_relay_expired_total',
      help: 'bundles dropped because their lifetime ended, by direction and priority',
      labelNames: ['direction', 'priority'],
      registers: [registry],
    }),
    refused: new Counter({
      name: 'driftline_relay_refused_upstream_total',
      help: 'bundles the upstream refused for good (e.g. unknown agent), by code',
      labelNames: ['code'],
      registers: [registry],
    }),
  };
}
export type RelayMetrics = ReturnType<typeof createRelayMetrics>;
