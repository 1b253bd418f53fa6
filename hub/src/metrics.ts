import { Counter, Gauge, type Registry } from 'prom-client';
import { registerClockGauges } from './adapters/http/clockMetrics.js';
import { registerCustodyGauges } from './adapters/http/custodyMetrics.js';
import type { HubStore } from './ports/HubStore.js';

/** What the hub counts for `/metrics`, as the parts that count call it. */
export interface HubMetrics {
  /** Bundles refused, by reason (`n` of them). */
  refused(reason: string, n?: number): void;
  /** Plan results merged. */
  merged(n: number): void;
  /** A path clock estimate held back (`jump`, `contradicts-bounds`). */
  clockHeld(reason: string): void;
  /** A v2 push's heartbeat rebuilt into the agent's change, or refused (decision 500). */
  heartbeat(outcome: 'rebuilt' | 'refused'): void;
  /** Document entries refused for their key (decision 570). */
  entriesRefused(n: number): void;
  /** A plan request sent again, unconfirmed by the agent. */
  resent(): void;
  /** An approval or a publication's manifest sent again, unconfirmed by the agent (decision 300). */
  resentOther(kind: 'approval' | 'publication' | 'contact-windows'): void;
  /** Downlink bundles past their lifetime, not sent. */
  expiredDownlink(n: number): void;
  /** Cells and runs of refs other than the default removed after retention. */
  refsExpired(cells: number, runs: number): void;
  /** Whether this hub runs the sweeps and webhook delivery now. */
  leads(leads: boolean): void;
}

/**
 * The hub's metrics in `registry`: the clock and custody gauges read from the store at each scrape, and
 * the counters the ingest, the hop backend, the sweeps and the leader election report to.
 */
export function createHubMetrics(
  registry: Registry,
  store: Pick<HubStore, 'listAgents' | 'listAgentBriefs' | 'listPeers'>,
): HubMetrics {
  registerClockGauges(registry, store);
  registerCustodyGauges(registry, store);
  const refused = new Counter({
    name: 'hub_bundles_refused_total',
    help: 'Bundles refused, by reason',
    labelNames: ['reason'],
    registers: [registry],
  });
  const merged = new Counter({
    name: 'hub_runs_merged_total',
    help: 'Plan results merged',
    registers: [registry],
  });
  const clockHeld = new Counter({
    name: 'hub_clock_estimates_held_total',
    help: 'Path clock estimates held back, by reason (jump, contradicts-bounds): docs/decisions/230',
    labelNames: ['reason'],
    registers: [registry],
  });
  const heartbeats = new Counter({
    name: 'hub_heartbeats_total',
    help: 'Quiet rounds taken as hop v2 heartbeats, by outcome (rebuilt into the agent change, refused): decision 500',
    labelNames: ['outcome'],
    registers: [registry],
  });
  const entriesRefused = new Counter({
    name: 'hub_doc_entries_refused_total',
    help: 'Agent document entries refused for their key (__proto__, a run not under its runId, a cell not under its names): docs/decisions/570',
    registers: [registry],
  });
  const resent = new Counter({
    name: 'hub_plan_requests_resent_total',
    help: 'Plan requests sent again because the agent had not confirmed them (decision 230)',
    registers: [registry],
  });
  const resentOther = new Counter({
    name: 'hub_downlink_resent_total',
    help: 'Approvals and publication manifests sent again because the agent had not confirmed them, by kind (decision 300)',
    labelNames: ['kind'],
    registers: [registry],
  });
  const expiredDownlink = new Counter({
    name: 'hub_downlink_expired_total',
    help: 'Downlink bundles past their lifetime, not sent',
    registers: [registry],
  });
  const refsExpired = new Counter({
    name: 'hub_ref_plans_expired_total',
    help: 'Cells and runs of refs other than the default removed after retention.refRetentionDays',
    labelNames: ['kind'],
    registers: [registry],
  });
  const leader = new Gauge({
    name: 'hub_leader',
    help: '1 while this hub runs the sweeps and webhook delivery (one hub of those sharing a database)',
    registers: [registry],
  });
  return {
    refused: (reason, n) => refused.inc({ reason }, n),
    merged: (n) => merged.inc(n),
    clockHeld: (reason) => clockHeld.inc({ reason }),
    heartbeat: (outcome) => heartbeats.inc({ outcome }),
    entriesRefused: (n) => entriesRefused.inc(n),
    resent: () => resent.inc(),
    resentOther: (kind) => resentOther.inc({ kind }),
    expiredDownlink: (n) => expiredDownlink.inc(n),
    refsExpired: (cells, runs) => {
      refsExpired.inc({ kind: 'cells' }, cells);
      refsExpired.inc({ kind: 'runs' }, runs);
    },
    leads: (leads) => leader.set(leads ? 1 : 0),
  };
}
