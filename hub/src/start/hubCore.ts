import type { HubEvent } from '@driftline/protocol';
import type { Logger } from 'pino';
import { HttpWebhookSender } from '../adapters/http/HttpWebhookSender.js';
import type { HubConfig } from '../config.js';
import { contactPlanSettings } from '../configContact.js';
import { ContactPlans } from '../core/contact/ContactPlans.js';
import { HubWindows } from '../core/contact/HubWindows.js';
import type { DocReplicas } from '../core/DocReplicas.js';
import { FleetJudge } from '../core/FleetJudge.js';
import { judgementOf } from '../core/fleetJudgement.js';
import { Ingest } from '../core/Ingest.js';
import { LiveEvents } from '../core/liveEvents.js';
import { PlanRequests } from '../core/PlanRequests.js';
import { Queries } from '../core/Queries.js';
import { relayInfos } from '../core/relayProblems.js';
import { Sweeper } from '../core/Sweeper.js';
import type { HubMetrics } from '../metrics.js';
import type { Clock } from '../ports/Clock.js';
import type { HubStore } from '../ports/HubStore.js';
import type { IdGen } from '../ports/IdGen.js';
import type { PublicationStore } from '../ports/PublicationStore.js';
import type { WebhookSender } from '../ports/WebhookSender.js';

/**
 * The hub's core over its store, as the config sets it: ingest (counted in the metrics), the queries
 * the API reads, plan requests, the sweeper (retention, staleness, webhooks), and the live events a
 * commit sends to the dashboards; each commit that heard from a site is a contact its windows are
 * learned from.
 */
export function hubCore(
  config: HubConfig,
  deps: {
    store: HubStore;
    publications: PublicationStore;
    replicas: DocReplicas;
    hubPrivateKey: CryptoKey;
    clock: Clock;
    ids: IdGen;
    logger: Logger;
    metrics: HubMetrics;
    sender?: WebhookSender;
    publish(event: HubEvent): void;
    /** Whether a dashboard may be listening (of this hub, or of another on a shared database). */
    listening(): boolean;
  },
) {
  const { store, clock, ids, logger, metrics } = deps;
  const ingest = new Ingest({
    store,
    clock,
    ids,
    replicas: deps.replicas,
    hubPrivateKey: deps.hubPrivateKey,
    webhookUrls: config.webhooks.urls,
    log: logger,
    count: {
      refused: (r) => metrics.refused(r),
      merged: metrics.merged,
      clockHeld: metrics.clockHeld,
      heartbeat: metrics.heartbeat,
      entriesRefused: metrics.entriesRefused,
    },
  });
  const contactPlans = new ContactPlans(contactPlanSettings(config.contactPlans));
  const queries = new Queries(store, config.defaultContactIntervalS, deps.publications, contactPlans);
  const planRequests = new PlanRequests({
    store,
    clock,
    ids,
    hubPrivateKey: deps.hubPrivateKey,
    ttlS: config.planRequestTtlS,
    defaultContactIntervalS: config.defaultContactIntervalS,
  });
  // windows declared at the hub go down to the site's agents (docs/decisions/590-windows-declared-once.md)
  const hubWindows = new HubWindows({
    store,
    clock,
    ids,
    hubPrivateKey: deps.hubPrivateKey,
    sites: config.contactPlans.sites,
  });
  const sweeper = new Sweeper({
    store,
    clock,
    contactPlans,
    webhookUrls: config.webhooks.urls,
    sender: deps.sender ?? new HttpWebhookSender(config.webhookSecret ?? ''),
    defaultContactIntervalS: config.defaultContactIntervalS,
    retention: {
      maxRunsPerCell: config.retention.maxRunsPerCell,
      maxAgeMs: config.retention.maxAgeDays * 86_400_000,
      failureMaxAgeMs: config.retention.failureMaxAgeDays * 86_400_000,
      refMaxAgeMs: config.retention.refRetentionDays * 86_400_000,
    },
    log: logger,
    countRefsExpired: metrics.refsExpired,
  });
  const live = new LiveEvents({
    publish: deps.publish,
    listening: deps.listening,
    queries,
    now: () => clock.now(),
    defaultContactIntervalS: config.defaultContactIntervalS,
  });
  // Site rows, briefs and peer rows, never the cells: this runs every sweep (docs/decisions/585-live-is-live.md).
  const judge = new FleetJudge({
    read: async (now) =>
      judgementOf(await queries.siteContacts(now), relayInfos(await store.listPeers(), now)),
    sweepIntervalS: config.sweepIntervalS,
  });
  ingest.onCommitted((c) => {
    for (const s of c.sites) contactPlans.record(s, clock.now());
    live.committed(c).catch((e) => logger.error({ err: e }, 'site event failed'));
  });
  return { ingest, queries, planRequests, hubWindows, sweeper, live, judge };
}
