import type { Clock } from '../ports/Clock.js';
import type {
  AgentFacts,
  CellRow,
  PlanRequestRow,
  PruneResult,
  RetentionPolicy,
  RetentionStore,
  SiteRow,
  SweepMarks,
  WebhookRow,
} from '../ports/HubStore.js';
import type { WebhookSender } from '../ports/WebhookSender.js';
import type { ContactPlans } from './contact/ContactPlans.js';
import { isStale, isUnreachable, type ViewContext } from './views.js';
import { afterAttempt, webhookRow } from './webhooks.js';

export interface SweepResult {
  /** Cells the read model marked stale in this sweep (their deadline passed). */
  advanced: number;
  expired: PlanRequestRow[];
  staleCells: CellRow[];
  unreachableSites: string[];
  pruned: PruneResult | null;
}

/** Cells one `advanceStale` step marks at most, and steps per sweep (the rest wait for the next sweep). */
const STALE_STEP = 500;
const STALE_STEPS = 40;

/**
 * Time-driven transitions, which no arriving bundle would trigger: expiring plan requests, cells going stale,
 * sites going unreachable (each queues its webhook once), retention, and webhook delivery with backoff.
 */
export class Sweeper {
  constructor(
    private readonly d: {
      store: RetentionStore;
      clock: Clock;
      webhookUrls: readonly string[];
      sender: WebhookSender;
      defaultContactIntervalS: number | null;
      retention: RetentionPolicy;
      /** Where removals of expired refs' plans are logged and counted. */
      log?: { info(obj: object, msg: string): void };
      countRefsExpired?: (cells: number, runs: number) => void;
      /** Judges a site with a contact plan by it: no stale or unreachable webhook for expected silence. */
      contactPlans?: ContactPlans;
    },
  ) {}

  async sweep(opts: { prune?: boolean } = {}): Promise<SweepResult> {
    const { store, clock } = this.d;
    const now = clock.now();
    const expired = (await store.listPlanRequests({ open: true }))
      .filter((r) => r.expiresAt <= now)
      .map((r) => ({ ...r, state: 'expired' as const }));
    const ctx: ViewContext = { now, defaultContactIntervalS: this.d.defaultContactIntervalS };
    // Briefs (decision 465): contact plans and reachability need no agent's cadence.
    const agents = await store.listAgentBriefs();
    const bySite = new Map<string, AgentFacts[]>();
    for (const a of agents) {
      const list = bySite.get(a.site);
      if (list) list.push(a);
      else bySite.set(a.site, [a]);
    }
    const siteRows = await store.listSites();
    // Sites judged by a contact plan: a cell ages only while its site is heard from (plus the grace).
    const planned = new Map<string, { unreachable: boolean; heard: number }>();
    for (const s of siteRows) {
      const k = this.d.contactPlans?.of(s.site, bySite.get(s.site) ?? [], s.lastContactAt, now);
      if (k?.judged && k.state !== 'unplanned')
        planned.set(s.site, {
          unreachable: k.state === 'unreachable',
          heard: s.lastContactAt === null ? now : Math.min(now, s.lastContactAt + k.graceS * 1000),
        });
    }
    // The read model's stale flags move for the cells whose deadline passed (an index on the deadline,
    // never the fleet), in bounded steps; each such cell is notified once, unless its site's contact plan
    // says the silence was expected (then it is not notified: decision 400).
    const staleCells: CellRow[] = [];
    let advanced = 0;
    for (let step = 0; step < STALE_STEPS; step++) {
      const due = await store.advanceStale(now, STALE_STEP);
      advanced += due.length;
      for (const c of due) {
        if (c.staleNotifiedFor === c.runId || !isStale(c, planned.get(c.site)?.heard ?? now)) continue;
        staleCells.push({ ...c, staleNotifiedFor: c.runId });
      }
      if (due.length < STALE_STEP) break;
    }
    const sites: SiteRow[] = [];
    for (const s of siteRows) {
      if (s.lastContactAt === null || s.unreachableNotifiedFor === s.lastContactAt) continue;
      const plan = planned.get(s.site);
      if (!(plan ? plan.unreachable : isUnreachable(s, bySite.get(s.site) ?? [], ctx))) continue;
      sites.push({ ...s, unreachableNotifiedFor: s.lastContactAt });
    }
    // Written only where still true (an ingest may have replaced a cell or heard from a site since it
    // was read here), each with its webhook in the same transaction.
    const written =
      expired.length + staleCells.length + sites.length > 0
        ? await store.markSwept({ expired, staleCells, sites }, (w) => this.webhooksFor(w, now))
        : { expired, staleCells, sites };
    const pruned = opts.prune ? await store.prune(this.d.retention, now) : null;
    if (pruned && pruned.refCells > 0) {
      const days = (this.d.retention.refMaxAgeMs ?? 0) / 86_400_000;
      this.d.log?.info(
        { refCells: pruned.refCells, refRuns: pruned.refRuns, refRetentionDays: days },
        `removed the plans of ${pruned.refCells} ref cell(s) not updated for ${days} days, with ${pruned.refRuns} run(s)`,
      );
      this.d.countRefsExpired?.(pruned.refCells, pruned.refRuns);
    }
    return {
      advanced,
      expired: written.expired,
      staleCells: written.staleCells,
      unreachableSites: written.sites.map((s) => s.site),
      pruned,
    };
  }

  /** The webhooks of the marks a sweep wrote: one per URL and transition (the id names it). */
  private webhooksFor(w: SweepMarks, now: number): WebhookRow[] {
    const out: WebhookRow[] = [];
    for (const c of w.staleCells) {
      const body = {
        site: c.site,
        environment: c.environment,
        component: c.component,
        runId: c.runId,
        plannedAt: new Date(c.plannedAt).toISOString(),
        expectedIntervalS: c.expectedIntervalS,
      };
      const subject = `${c.site}/${c.environment}/${c.component}`;
      for (const u of this.d.webhookUrls)
        out.push(webhookRow(u, 'cell-stale', subject, `${c.runId}@${c.plannedAt}`, body, now));
    }
    for (const s of w.sites) {
      if (s.lastContactAt === null) continue;
      const body = { site: s.site, lastContactAt: new Date(s.lastContactAt).toISOString() };
      for (const u of this.d.webhookUrls)
        out.push(webhookRow(u, 'site-unreachable', s.site, s.lastContactAt, body, now));
    }
    return out;
  }

  /** Sends due webhooks once each; failures are retried later with backoff. Returns how many were tried. */
  async deliverWebhooks(limit = 100): Promise<number> {
    const { store, clock, sender } = this.d;
    const due = await store.dueWebhooks(clock.now(), limit);
    for (const row of due) {
      const result = await sender.send(row.url, row.event, row.body);
      await store.commit({ webhookUpdates: [afterAttempt(row, result, clock.now())] });
    }
    return due.length;
  }
}
