import { statfsSync } from 'node:fs';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Clock } from './ports/Clock.js';
import type { Custody, CustodyStats } from './ports/Custody.js';

/** The relay's metrics: queues, ages, forwards, expiry, disk, what each peer holds and was refused. Bytes per peer are hop's. */
export function createRelayMetrics(
  registry: Registry,
  custody: CustodyStats & Pick<Custody, 'blobs'>,
  clock: Clock,
  dataDir: string,
  upstreams: readonly string[] = [],
) {
  new Gauge({
    name: 'driftline_relay_blobs_set_aside',
    help: 'blobs an upstream refused for good (too large, bad metadata), held and not offered to it again yet',
    labelNames: ['upstream'],
    registers: [registry],
    collect() {
      this.reset();
      for (const u of upstreams) this.set({ upstream: u }, custody.blobs.setAsideFor(u, clock.now()).length);
    },
  });
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
  new Gauge({
    name: 'driftline_relay_disk_used_bytes',
    help: 'bytes counted against storage.maxBytes: SQLite file, blobs, publications, in-progress uploads',
    registers: [registry],
    collect() {
      this.set(custody.usage().total);
    },
  });
  new Gauge({
    name: 'driftline_relay_peer_held_bundles',
    help: 'uplink bundles held for each downstream peer (limits.peerMaxBundles)',
    labelNames: ['peer'],
    registers: [registry],
    collect() {
      this.reset();
      for (const h of custody.heldByPeer()) this.set({ peer: h.peer }, h.bundles);
    },
  });
  new Gauge({
    name: 'driftline_relay_peer_held_bytes',
    help: 'bytes of uplink bundles and blobs held for each downstream peer (limits.peerMaxBytes)',
    labelNames: ['peer'],
    registers: [registry],
    collect() {
      this.reset();
      for (const h of custody.heldByPeer()) this.set({ peer: h.peer }, h.bytes);
    },
  });
  return {
    peerRefusals: new Counter({
      name: 'driftline_relay_peer_refusals_total',
      help: 'bundles and uploads refused to a downstream peer, by peer and reason (foreign-site, not-uplink, quota-bundles, quota-bytes, storage-full)',
      labelNames: ['peer', 'reason'],
      registers: [registry],
    }),
    refusals: new Counter({
      name: 'driftline_relay_refusals_total',
      help: 'data refused for its content, by peer and reason (checksum-mismatch: an upload whose bytes do not hash to the sha256 it announced)',
      labelNames: ['peer', 'reason'],
      registers: [registry],
    }),
    blobsLost: new Counter({
      name: 'driftline_relay_blobs_lost_total',
      help: 'blobs in custody whose file was gone from disk when forwarded (deleted, a lost volume): dropped; the agent uploads them again without a hub receipt',
      registers: [registry],
    }),
    downlinkConflicts: new Counter({
      name: 'driftline_relay_downlink_conflicts_total',
      help: 'downlink copies pulled under an id already taken with other bytes (altered on the way, or an upstream that lies), by upstream and site; both are served',
      labelNames: ['upstream', 'site'],
      registers: [registry],
    }),
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
