import type { Logger } from 'pino';
import type { ForwardEvent } from './core/Forwarder.js';
import type { RelayMetrics } from './metrics.js';

/** Metrics and logs for what forwarding did (`ForwardEvent`s from core). */
export function forwardEvents(metrics: RelayMetrics, log: Logger) {
  return (e: ForwardEvent) => {
    if (e.type === 'forwarded') {
      metrics.forwards.inc({ upstream: e.upstream, result: 'ok' });
      metrics.bytesOut.inc({ upstream: e.upstream }, e.bytes);
      log.debug(e, 'forwarded');
    } else if (e.type === 'blob-forwarded') {
      metrics.bytesOut.inc({ upstream: e.upstream }, e.bytes);
      log.debug(e, 'blob forwarded');
    } else if (e.type === 'blob-set-aside') {
      metrics.forwards.inc({ upstream: e.upstream, result: 'blob-set-aside' });
      log.error(
        { ...e, retryAt: new Date(e.retryAt).toISOString() },
        'upstream refused a blob for good; set aside for that upstream (still held), the blobs behind it go on',
      );
    } else if (e.type === 'blob-lost') {
      metrics.blobsLost.inc();
      log.error(
        e,
        'a blob in custody is gone from disk (deleted or lost): dropped from custody and counted; its agent uploads it again while the hub has not receipted it',
      );
    } else if (e.type === 'failed') {
      metrics.forwards.inc({ upstream: e.upstream, result: 'failed' });
      if (e.retryable) log.warn(e, 'forwarding failed; backing off');
      else
        log.error(
          e,
          'forwarding refused by the upstream; sending it again unchanged will not help (fix the cause)',
        );
    } else if (e.type === 'refused') {
      for (const r of e.receipts) metrics.refused.inc({ code: r.code ?? 'unknown' });
      log.error(
        { upstream: e.upstream, receipts: e.receipts },
        'upstream refused bundles for good; dropped and counted',
      );
    } else {
      metrics.expired.inc({ direction: e.direction, priority: e.priority });
      log.warn({ ...e, reason: 'lifetime ended before delivery' }, 'bundle expired; dropped and counted');
    }
  };
}
