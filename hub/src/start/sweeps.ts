import type { Logger } from 'pino';
import type { PgDatabase } from '../adapters/postgres/PgDatabase.js';
import { PgLeader } from '../adapters/postgres/PgLeader.js';
import type { Approvals } from '../core/Approvals.js';
import type { HubWindows } from '../core/contact/HubWindows.js';
import type { FleetJudge } from '../core/FleetJudge.js';
import { type Leadership, soleLeader } from '../core/leader.js';
import type { LiveEvents } from '../core/liveEvents.js';
import type { PlanRequests } from '../core/PlanRequests.js';
import type { PublicationResends } from '../core/publish/PublicationResends.js';
import type { Sweeper } from '../core/Sweeper.js';
import type { HubMetrics } from '../metrics.js';
import type { Clock } from '../ports/Clock.js';

export interface HubSweepDeps {
  sweeper: Sweeper;
  live: LiveEvents;
  /** What time alone moved since the last sweep (contact states, relay problems), for the dashboards. */
  judge?: Pick<FleetJudge, 'judge'>;
  planRequests: PlanRequests;
  /** The hub's declared contact windows, sent to agents until they hold them (decision 590). */
  hubWindows?: Pick<HubWindows, 'sendDue'>;
  approvals: Pick<Approvals, 'resendUnconfirmed'>;
  publicationResends?: Pick<PublicationResends, 'resendUnconfirmed'>;
  metrics: HubMetrics;
  clock: Clock;
  logger: Logger;
  /** A shared database: one hub of those on it leads (runs the sweeps and webhooks). */
  postgres?: PgDatabase;
  sweepIntervalS: number;
  /** Once per sweep: sites overdue and relays silent as webhooks, once per silence (decision 421). */
  notices?: () => Promise<void>;
}

/**
 * The hub's periodic sweep, run by the leading hub only: expiries, stale cells and unreachable sites
 * (sent as live events), plan requests, approvals and publications the agent has not confirmed sent
 * again (logged; decisions 230 and 300), webhooks delivered; every 240th sweep also prunes.
 */
export function hubSweeps(d: HubSweepDeps) {
  const { logger, clock } = d;
  const sweepOnce = async (prune: boolean) => {
    await d.live.swept(await d.sweeper.sweep({ prune }));
    // A relay going silent or a window opening moves no row: judged here, sent as it is first seen.
    await d.judge
      ?.judge(clock.now())
      .then((j) => d.live.judged(j))
      .catch((e) => logger.warn({ err: e }, 'contact states and relay problems were not judged'));
    await d.notices?.().catch((e) => logger.warn({ err: e }, 'site and relay notices were not queued'));
    // Requests the agent has not confirmed go down again (decision 230), logged and counted.
    for (const x of await d.planRequests.resendUnconfirmed()) {
      d.metrics.resent();
      d.live.requestRow(x, clock.now());
      logger.warn(
        {
          requestId: x.requestId,
          site: x.site,
          agent: x.agent,
          requestedAt: new Date(x.requestedAt).toISOString(),
        },
        "sent a plan request again: the agent's document does not say it arrived; if this repeats, check the relays on the site's path (GET /api/relays)",
      );
    }
    // Windows hub.yaml declares for a site go down until its agents hold them (decision 590).
    for (const x of (await d.hubWindows?.sendDue().catch((e) => {
      logger.warn({ err: e }, 'contact windows were not sent to the agents');
      return [];
    })) ?? []) {
      if (x.again) d.metrics.resentOther('contact-windows');
      const fields = { site: x.site, agent: x.agent, windows: x.windows };
      if (x.again)
        logger.warn(
          fields,
          "sent the site's contact windows again: the agent does not say it holds them; if this repeats, check the relays on the site's path (GET /api/relays) and the agent's version",
        );
      else logger.info(fields, 'sent the contact windows hub.yaml declares for the site to its agent');
    }
    // Approvals the agent's record does not name go down again (decision 300), logged and counted.
    for (const a of await d.approvals.resendUnconfirmed()) {
      d.metrics.resentOther('approval');
      logger.warn(
        {
          approvalId: a.approvalId,
          site: a.site,
          runId: a.runId,
          submittedAt: new Date(a.submittedAt).toISOString(),
        },
        "sent an approval again: the agent's record does not name it; if this repeats, check the relays on the site's path (GET /api/relays)",
      );
    }
    // Publications the site's agent has not reported go down again (decision 300), logged and counted.
    for (const u of (await d.publicationResends?.resendUnconfirmed()) ?? []) {
      d.metrics.resentOther('publication');
      logger.warn(
        { publicationId: u.publication.publicationId, site: u.site, name: u.publication.name },
        "sent a publication's manifest again: the site's agent has not reported it; if this repeats, check the relays on the site's path (GET /api/relays)",
      );
    }
    await d.sweeper.deliverWebhooks();
  };
  const timers: NodeJS.Timeout[] = [];
  let sweeps = 0;
  let sweeping = false;
  let leader: Leadership = soleLeader;
  return {
    /** One sweep now, as the timer runs it (tests, and a world that moves the clock itself). */
    sweepOnce: () => sweepOnce(false),
    /** Starts the periodic sweep and webhook delivery (not started in tests, which call the sweeper). */
    start(): void {
      leader = d.postgres
        ? new PgLeader(d.postgres, {
            onChange: (leads, err) => {
              d.metrics.leads(leads);
              if (leads) logger.info('this hub leads now: it runs the sweeps and sends the webhooks');
              else logger.warn({ err }, 'this hub no longer leads; another hub on the database takes over');
            },
          })
        : soleLeader;
      d.metrics.leads(leader.isLeader());
      const t = setInterval(() => {
        if (sweeping || !leader.isLeader()) return;
        sweeping = true;
        sweepOnce(sweeps++ % 240 === 0)
          .catch((e) => logger.error({ err: e }, 'sweep failed'))
          .finally(() => {
            sweeping = false;
          });
      }, d.sweepIntervalS * 1000);
      t.unref();
      timers.push(t);
    },
    async close(): Promise<void> {
      for (const t of timers) clearInterval(t);
      await leader.close();
    },
  };
}
