import type { RunningAgent } from '@driftline/edge-agent';

/** A run as the world saw an agent record it. */
interface Recorded {
  component: string;
  environment: string;
  status: string;
  finishedAt: number;
  unchanged: boolean;
  /** The agent's document epoch it was recorded in (what a prune deletes by). */
  epoch: number;
}

/** What the world saw one site's agent record, by run id. */
export interface SiteLedger {
  site: string;
  recorded: Map<string, Recorded>;
}

/** What the hub committed of one run: when first, and how many commits carried it. */
interface Arrival {
  site: string;
  at: number;
  commits: number;
}

/** The figures the world's invariants judge (docs/decisions/540-deterministic-world.md). */
export interface LedgerFigures {
  recorded: number;
  arrived: number;
  /** Recorded at an agent, never committed at the hub. */
  lost: number;
  /** Committed at the hub and recorded by no agent of that site (a run made up on the way). */
  unknown: number;
  /** Runs the hub committed more than once (a merge that materialised a run again). */
  recommitted: number;
  /** Longest time from a run's end at the agent to its commit at the hub, ms. */
  maxAgeMs: number;
}

/**
 * The world's ledger of runs: every run an agent records (read from its ledger as it records them, while it is
 * unacknowledged, which it stays for at least a round trip) and every run the hub commits. Run ids are
 * random (ULIDs), so the canonical form the digest reads is the runs' cells, ends and statuses, not ids.
 */
export class WorldLedger {
  private readonly sites = new Map<string, SiteLedger>();
  private readonly arrivals = new Map<string, Arrival>();
  /** Moves whenever a run is recorded or committed: {@link figures} is read after every event of a drain. */
  private version = 0;
  private last: { version: number; endedBy: number; figures: LedgerFigures } | null = null;

  site(name: string): SiteLedger {
    let s = this.sites.get(name);
    if (!s) {
      s = { site: name, recorded: new Map() };
      this.sites.set(name, s);
      this.version++;
    }
    return s;
  }

  watchAgent(site: SiteLedger, agent: RunningAgent): void {
    const storage = agent.storage;
    for (const e of storage.epochs('unpruned'))
      for (const r of storage.unackedRuns(e.epoch))
        if (!site.recorded.has(r.runId)) {
          this.version++;
          site.recorded.set(r.runId, {
            component: r.component,
            environment: r.environment,
            status: r.status,
            finishedAt: r.finishedAt,
            unchanged: r.unchanged,
            epoch: e.epoch,
          });
        }
  }

  /** What one hub commit carried: its runs, and its cells (each naming its latest run, an unchanged one too). */
  hubCommitted(runs: readonly { runId: string; site: string }[], at: number): void {
    this.version++;
    const once = new Map(runs.map((r) => [r.runId, r]));
    for (const r of once.values()) {
      const a = this.arrivals.get(r.runId);
      if (a) a.commits++;
      else this.arrivals.set(r.runId, { site: r.site, at, commits: 1 });
    }
  }

  /**
   * Checked at the very write (docs/decisions/540-deterministic-world.md, "Invariants at each step"): a run
   * with changes an agent marks acknowledged must have been committed at the hub by then — an ack for a run
   * the hub does not hold is a result the agent may prune and lose. An unchanged run reaches the hub as its
   * cell's time (decision 370), corrected by the hub's offset estimate, which this ledger cannot compare
   * with the agent's clock to the millisecond: those are judged at the end (`lost`), as before.
   */
  readonly acks = { taken: 0, uncovered: 0, first: [] as string[] };

  /** Runs `site`'s agent is marking acknowledged at `at` (its write of them, before it is applied). */
  agentAcked(site: SiteLedger, runIds: readonly string[], at: number): void {
    for (const id of runIds) {
      this.acks.taken++;
      if (this.arrivals.get(id)?.site === site.site) continue;
      const r = site.recorded.get(id);
      if (r?.unchanged) continue;
      if (++this.acks.uncovered <= 5)
        this.acks.first.push(
          `${site.site} ${id}${r ? ` ${r.component}/${r.environment}` : ' (a run the world never saw recorded)'} at ${new Date(at).toISOString()}`,
        );
    }
  }

  /**
   * Checked at the very write, as acks are: an epoch an agent prunes (its document's changes and its acked
   * runs deleted) must hold no run with changes the hub has not committed — else what the prune deleted is
   * lost for good. Unchanged runs are judged at the end, as for acks.
   */
  readonly prunes = { epochs: 0, runs: 0, uncovered: 0, first: [] as string[] };

  /** `site`'s agent is pruning `epochs` at `at` (its write of it, before it is applied). */
  agentPruned(site: SiteLedger, epochs: readonly number[], at: number): void {
    const pruned = new Set(epochs);
    this.prunes.epochs += pruned.size;
    for (const [id, r] of site.recorded) {
      if (!pruned.has(r.epoch)) continue;
      this.prunes.runs++;
      if (this.arrivals.get(id)?.site === site.site || r.unchanged) continue;
      if (++this.prunes.uncovered <= 5)
        this.prunes.first.push(
          `${site.site} epoch ${r.epoch} ${id} ${r.component}/${r.environment} at ${new Date(at).toISOString()}`,
        );
    }
  }

  /** The figures; with `endedBy`, only runs that ended by then count as recorded (later ones may be on their way). */
  figures(endedBy = Number.POSITIVE_INFINITY): LedgerFigures {
    // a drain asks after every event, and most events record and commit nothing: no need to count again
    const last = this.last;
    if (last && last.version === this.version && last.endedBy === endedBy) return { ...last.figures };
    const figures = this.count(endedBy);
    this.last = { version: this.version, endedBy, figures };
    return { ...figures };
  }

  private count(endedBy: number): LedgerFigures {
    let recorded = 0;
    let lost = 0;
    let maxAgeMs = 0;
    for (const s of this.sites.values()) {
      const latest = this.latestArrivedByCell(s);
      for (const [id, r] of s.recorded) {
        if (r.finishedAt > endedBy) continue;
        recorded++;
        const a = this.arrivals.get(id);
        if (a && a.site === s.site) maxAgeMs = Math.max(maxAgeMs, a.at - r.finishedAt);
        else if (!this.confirmedLater(r, latest)) lost++;
      }
    }
    let unknown = 0;
    let recommitted = 0;
    let arrived = 0;
    for (const [id, a] of this.arrivals) {
      const r = this.sites.get(a.site)?.recorded.get(id);
      if (!r) unknown++;
      else if (r.finishedAt <= endedBy) arrived++;
      if (a.commits > 1) recommitted++;
    }
    return { recorded, arrived, lost, unknown, recommitted, maxAgeMs };
  }

  /**
   * An unchanged run (a confirmation) reaches the hub as its cell's time, not as a run of its own (decision
   * 370): it has arrived once a run of its cell that ended no earlier has.
   */
  private confirmedLater(r: Recorded, latest: Map<string, number>): boolean {
    return r.unchanged && (latest.get(`${r.component}/${r.environment}`) ?? -1) >= r.finishedAt;
  }

  private latestArrivedByCell(s: SiteLedger): Map<string, number> {
    const latest = new Map<string, number>();
    for (const [id, r] of s.recorded) {
      if (this.arrivals.get(id)?.site !== s.site) continue;
      const cell = `${r.component}/${r.environment}`;
      latest.set(cell, Math.max(latest.get(cell) ?? -1, r.finishedAt));
    }
    return latest;
  }

  /** Lost runs of a site (for a failing world's report). */
  lostOf(site: string): string[] {
    const s = this.sites.get(site);
    if (!s) return [];
    const latest = this.latestArrivedByCell(s);
    return [...s.recorded]
      .filter(([id, r]) => this.arrivals.get(id)?.site !== site && !this.confirmedLater(r, latest))
      .map(
        ([id, r]) =>
          `${id} ${r.component}/${r.environment} ${r.status}${r.unchanged ? ' unchanged' : ''} ended ${new Date(r.finishedAt).toISOString()}`,
      );
  }

  /** Every run as cell, end, status and arrival time, sorted: the digest's input. */
  canonical(): string[] {
    const rows: string[] = [];
    for (const s of this.sites.values())
      for (const [id, r] of s.recorded)
        rows.push(
          `${s.site}/${r.component}/${r.environment}@${r.finishedAt}:${r.status}>${this.arrivals.get(id)?.at ?? 'lost'}`,
        );
    return rows.sort();
  }
}
