import { cellKey } from '@driftline/protocol';
import type { RecordRunInput, RecordRunResult } from '../../ports/Ledger.js';
import type { Logger } from '../../ports/Logger.js';
import type { RunPlanOptions, RunPlanResult } from '../plan/runPlan.js';
import type { CellRef, TriggerReason } from '../schedule/CellScheduler.js';
import { ProviderWaits } from './ProviderWaits.js';
import { packDetail } from './packDetail.js';

/** The facts sent with every result (cadences, version, platform, the site's source heads and provider builds). */
export type CycleFacts = NonNullable<RecordRunInput['facts']>;

/** What a plan of a cell asks of the approve → apply side (`ApplyCoordinator`). */
export interface CellApplies {
  /** Applies an approved plan of the cell waiting for its slot; the applied run's id, if one was. */
  applyFirst(cell: CellRef): Promise<string | undefined>;
  /** Whether a plan of the cell keeps its saved plan file. */
  keepsPlanFile(cell: CellRef): boolean;
  /** Whether a plan equal to the shown run's may only confirm that run. */
  mayConfirm(cell: CellRef, shownRunId: string): boolean;
  /** Keeps (or drops) the saved plan of the run just recorded. */
  planRecorded(
    cell: CellRef,
    runId: string,
    result: RunPlanResult,
    unchanged: boolean,
    appliedRunId?: string,
  ): Promise<void>;
}

export interface PlanCycleDeps {
  /** Plans a cell: `runPlan` with the agent's config and plan ports. */
  plan(cell: CellRef, options: RunPlanOptions): Promise<RunPlanResult>;
  applies: CellApplies;
  /** The ledger's slice the cycle uses. */
  ledger: {
    lockedStreak(environment: string, component: string, cellRef?: string): number;
    updateFacts(facts: CycleFacts): boolean;
    /** A plan of `cell` starts: the plan requests it will answer say so; their ids (decision 560). */
    planStarting(cell: CellRef): string[];
  };
  /** Records a result durably (`RecordBatcher.record`: results finishing together share a commit). */
  record(input: RecordRunInput): Promise<RecordRunResult>;
  newId(): string;
  /** Asks the scheduler for a run of a cell. */
  trigger(cell: CellRef, reason: TriggerReason): void;
  /** Something is ready to push: wakes the sync loop. */
  kick(): void;
  /** The agent's facts; the cycle keeps `sources` and `providers` in them current. */
  facts: CycleFacts;
  /** The repositories components plan from (`source`): their heads go into the facts. */
  repos: readonly string[];
  /** Heads of a repository in the site's mirror. */
  heads(repo: string): Promise<Record<string, string>>;
  /** The provider builds the site's mirrors hold; absent when the agent has no provider mirror. */
  providerBuilds?(): Promise<string[]>;
  /** The cells to plan when a bundle brought new heads of `repo` (none when new heads are not planned). */
  cellsForNewHeads(repo: string, updated: Record<string, string>): CellRef[];
  log: Logger;
}

/**
 * The plan-a-cell use case of the daemon: apply what waits for the cell's slot, plan, record the result
 * with its packed detail, keep the saved plan, wake the sync loop; and the facts that tell a publisher
 * what the site holds (source heads, provider builds), with re-plans when new code or providers arrive.
 * `startAgent` wires it to the scheduler, the batcher, the apply coordinator and the publication sinks.
 */
export class PlanCycle {
  private readonly waits = new ProviderWaits();

  constructor(private readonly deps: PlanCycleDeps) {}

  /** One run of a cell, as the scheduler calls it. */
  async runCell(cell: CellRef, reason: TriggerReason): Promise<void> {
    const { applies, ledger, log } = this.deps;
    // An approved plan of this cell waiting for its slot is applied first; the plan then shows the result.
    const applied = await applies.applyFirst(cell);
    const lockedStreak = ledger.lockedStreak(cell.environment, cell.component, cell.ref);
    // Someone waiting on a request sees it running: the word goes up now, before the plan's minutes
    // (docs/decisions/560-plan-request-states.md).
    const started = ledger.planStarting(cell);
    if (started.length > 0) {
      log.info({ ...cell, requestIds: started, reason }, 'requested plan started');
      this.deps.kick();
    }
    const r = await this.deps.plan(cell, {
      lockedStreak,
      source: { ref: cell.ref, commit: cell.commit },
      keepPlanFile: applies.keepsPlanFile(cell),
    });
    const runId = this.deps.newId();
    const canonical = r.summary.status !== 'redaction-failed' ? r.canonical : undefined;
    // A cron round's news may wait for the round, capped by the cell's cadence; start-up's, a request's or
    // a manual run's never does (docs/decisions/485-news-waits-for-its-round.md).
    const everyS =
      reason === 'schedule' ? this.deps.facts.cadenceS[cellKey(cell.environment, cell.component)] : undefined;
    const recorded = await this.deps.record({
      runId,
      summary: r.summary,
      detail: canonical ? () => packDetail(canonical) : undefined,
      lockedStreak: r.lockedStreak,
      ...(cell.ref ? { cellRef: cell.ref } : {}),
      mayConfirm: (shown) => applies.mayConfirm(cell, shown),
      facts: this.deps.facts,
      ...(everyS ? { scheduledEveryS: everyS } : {}),
    });
    log.info({ ...cell, runId, reason, status: r.summary.status, ...recorded }, 'result recorded');
    // The plan file is kept under the run's id before the result goes up (an approval names it);
    // a failure to keep it must not hold the result back.
    await applies
      .planRecorded(cell, runId, r, recorded.unchanged, applied)
      .catch((e: unknown) =>
        log.warn({ ...cell, runId, err: (e as Error).message }, 'keeping the plan file failed'),
      );
    this.deps.kick();
    this.waits.note(cell, r.summary);
  }

  /** Reads the mirrors' heads and provider builds into the facts, so a publisher sends only what the site lacks. */
  async refreshSources(): Promise<void> {
    const { repos, facts } = this.deps;
    if (repos.length === 0 && !this.deps.providerBuilds) return;
    const sources: Record<string, Record<string, string>> = {};
    for (const r of repos) sources[r] = await this.deps.heads(r);
    if (repos.length > 0) facts.sources = sources;
    if (this.deps.providerBuilds) facts.providers = await this.deps.providerBuilds();
    this.deps.ledger.updateFacts(facts);
    this.deps.kick();
  }

  /** A git bundle brought new heads of `repo`: the facts say so, and the cells that plan them run. */
  headsArrived(repo: string, updated: Record<string, string>): void {
    this.deps.log.info({ repo, updated }, 'git bundle fetched into the mirror');
    void this.refreshSources();
    for (const cell of this.deps.cellsForNewHeads(repo, updated)) this.deps.trigger(cell, 'source');
  }

  /** A provider build was placed in the mirror: the facts say so, and the cells blocked on providers run again. */
  providerArrived(path: string): void {
    this.deps.log.info({ path }, 'provider build placed in the mirror');
    void this.refreshSources();
    for (const cell of this.waits.waiting()) this.deps.trigger(cell, 'source');
  }
}
