import { cellKey, type DocApply, refMatches } from '@driftline/protocol';
import type { ApplyRecord, ApplyStore, CountedApproval } from '../../ports/ApplyStore.js';
import type { Logger } from '../../ports/Logger.js';
import type { PlanFiles } from '../../ports/PlanFiles.js';
import { defaultRef } from '../plan/prepareSource.js';
import { cellRefOf } from '../plan/refPolicy.js';
import type { RunPlanDeps, RunPlanResult } from '../plan/runPlan.js';
import type { CellRef } from '../schedule/CellScheduler.js';
import type { ApplySettings, PlanSettings } from '../settings.js';
import type { ApprovalPayload } from '../sync/SyncEngine.js';
import { applyConfigFor, checkApproval, SETTLED } from './checkApproval.js';
import { runApply } from './runApply.js';

export interface ApplyCoordinatorDeps {
  site: string;
  config: PlanSettings;
  store: ApplyStore;
  planFiles: PlanFiles;
  /** What the apply runs with: the plan runs' processes, scratch space, mirrors, clock. */
  runDeps: RunPlanDeps;
  now(): number;
  log: Logger;
  /** Asks for a run of the cell: its slot (one run of a cell at a time) applies first, then plans. */
  trigger(cell: CellRef): void;
}

const MAX_REASON = 300;
const cut = (s: string) => (s.length > MAX_REASON ? `${s.slice(0, MAX_REASON - 1)}…` : s);
const queueKey = (environment: string, component: string, cellRef?: string) =>
  cellKey(environment, component, cellRef);

/** The ref a run of the cell plans: the cell's, the component's default, or `main` for a working directory. */
function refOfCell(config: PlanSettings, cell: CellRef): string {
  const c = config.components.find((x) => x.name === cell.component);
  return cell.ref ?? (c ? defaultRef(c) : undefined) ?? 'main';
}

/**
 * Approve → apply at the agent (S6 in docs/architecture.md#invariants, decision 090): counts verified approvals per run, refuses the
 * rest with a reason in the document's `applies`, applies a run's saved plan once its quorum is met (in
 * the cell's scheduler slot, then plans the cell again), and keeps the saved plans of apply-enabled cells.
 */
export class ApplyCoordinator {
  /** Runs whose quorum is met, by cell: the cell's next slot applies them. */
  private readonly queued = new Map<string, string>();

  constructor(private readonly deps: ApplyCoordinatorDeps) {}

  /** Whether a plan of `cell` keeps its saved plan file: apply is enabled for it and its ref. */
  keepsPlanFile(cell: CellRef): boolean {
    const a = applyConfigFor(this.deps.config, cell.environment, cell.component);
    const ref = refOfCell(this.deps.config, cell);
    return !!a && a.apply.refs.some((p) => refMatches(p, ref));
  }

  /**
   * Whether a plan of `cell` equal to the plan of the run its cell shows (`shownRunId`) may only confirm
   * that run. Not when that run's saved plan was used (applied, failed to apply, or an apply started): its
   * file is gone, so the plan must become a run of its own, with a plan file, to be approved again
   * (decision 200). Cells without apply keep the usual confirmation.
   */
  mayConfirm(cell: CellRef, shownRunId: string): boolean {
    if (!this.keepsPlanFile(cell)) return true;
    const a = this.deps.store.applyRecord(shownRunId)?.apply;
    // An apply queued but not started still has its plan file: that run stays the one to apply.
    if (!a || (a.state === 'applying' && a.startedAt === undefined)) return true;
    return !(SETTLED as readonly string[]).includes(a.state);
  }

  /** Handles one relayed approval: counted, refused (recorded with its reason) or a replay (nothing). */
  async receive(payload: ApprovalPayload): Promise<void> {
    const { store, log } = this.deps;
    const now = this.deps.now();
    const d = await checkApproval(payload.approval, payload.site, {
      site: this.deps.site,
      now,
      config: this.deps.config,
      record: (runId) => store.applyRecord(runId),
      planFile: (runId) => this.deps.planFiles.open(runId),
      laterRun: (e, c, r, runId) => store.laterRun(e, c, r, runId),
    });
    if (d.kind === 'replay') {
      log.info({ runId: d.claims.runId, approvalId: d.claims.approvalId }, `approval ignored: ${d.why}`);
      return;
    }
    if (d.kind === 'refused') {
      log.warn(
        { runId: d.claims?.runId, approvalId: d.claims?.approvalId, reason: d.reason },
        'approval refused: nothing is applied',
      );
      if (!d.claims) return; // no run to name: logged, counted by the sync engine
      const c = d.claims;
      const rec = store.applyRecord(c.runId);
      // Each refused approval is listed with its own reason (decision 250); the run's state changes only
      // when nothing else speaks for it: a run waiting for quorum keeps waiting, a settled one stays so.
      const refused = [
        ...(rec?.apply.refused ?? []).filter((x) => x.approvalId !== c.approvalId),
        { approvalId: c.approvalId, reason: cut(d.reason), at: now },
      ].slice(-20);
      const settled = rec && (SETTLED as readonly string[]).includes(rec.apply.state);
      const waiting = rec?.apply.state === 'waiting-quorum' && d.scope === 'approval';
      const { reason: _kept, ...prevFields } = rec?.apply ?? {};
      this.save(
        settled && rec
          ? { ...rec.apply, refused }
          : {
              ...prevFields,
              runId: c.runId,
              environment: c.environment,
              component: c.component,
              ref: c.ref,
              state: waiting ? 'waiting-quorum' : 'refused',
              reason: cut(waiting ? `an approval was refused: ${d.reason}` : d.reason),
              refused,
            },
        rec,
        rec?.counted ?? [],
      );
      return;
    }
    const c = d.approval.claims;
    const rec = store.applyRecord(c.runId);
    const counted = [
      ...(rec?.counted ?? []),
      {
        approvalId: c.approvalId,
        approver: d.approval.approver,
        approvedAt: c.approvedAt,
        expiresAt: c.expiresAt,
      },
    ];
    const valid = this.stillValid(counted, d.apply, now);
    const approvers = new Set(valid.map((x) => x.approver));
    const met = approvers.size >= d.apply.quorum;
    const cellRef = d.plan.meta.cellRef;
    this.save(
      {
        runId: c.runId,
        environment: c.environment,
        component: c.component,
        ref: c.ref,
        state: met ? 'applying' : 'waiting-quorum',
        quorum: d.apply.quorum,
      },
      rec,
      counted,
      c.planFileSha256,
    );
    log.info(
      { runId: c.runId, approvalId: c.approvalId, approvers: approvers.size, quorum: d.apply.quorum },
      met ? 'approval counted: quorum met, the apply is queued' : 'approval counted: waiting for quorum',
    );
    if (!met) return;
    this.queued.set(queueKey(c.environment, c.component, cellRef), c.runId);
    this.deps.trigger({
      component: c.component,
      environment: c.environment,
      ...(cellRef ? { ref: cellRef } : {}),
    });
  }

  /** Approvals that still count: unexpired, young enough, from a key the config still pins. */
  private stillValid(counted: CountedApproval[], apply: ApplySettings, now: number): CountedApproval[] {
    return counted.filter(
      (x) =>
        x.expiresAt >= now &&
        now - x.approvedAt <= apply.maxApprovalAgeS * 1000 &&
        apply.approvers.includes(x.approver),
    );
  }

  private save(
    fields: Omit<DocApply, 'approvalIds' | 'approvers' | 'receivedAt' | 'updatedAt'>,
    prev: ApplyRecord | undefined,
    counted: CountedApproval[],
    planFileSha256 = prev?.planFileSha256,
  ): ApplyRecord {
    const now = this.deps.now();
    const refused = fields.refused ?? prev?.apply.refused;
    const apply: DocApply = {
      ...fields,
      ...(refused ? { refused } : {}),
      approvalIds: counted.map((x) => x.approvalId).slice(-50),
      approvers: [...new Set(counted.map((x) => x.approver))].slice(-50),
      receivedAt: prev?.apply.receivedAt ?? now,
      updatedAt: now,
    };
    for (const k of Object.keys(apply) as (keyof DocApply)[]) if (apply[k] === undefined) delete apply[k];
    const rec: ApplyRecord = {
      apply,
      counted: counted.slice(-50),
      ...(planFileSha256 ? { planFileSha256 } : {}),
    };
    this.deps.store.setApply(rec);
    return rec;
  }

  /**
   * In the cell's scheduler slot, before its plan: applies the run queued for `cell`, if any, after
   * checking again that its plan file is intact and no later plan superseded it. Returns the run applied
   * (or that failed to apply), whose `nextRunId` the plan that follows fills in.
   */
  async applyFirst(cell: CellRef): Promise<string | undefined> {
    const key = queueKey(cell.environment, cell.component, cell.ref);
    const runId = this.queued.get(key);
    if (!runId) return undefined;
    this.queued.delete(key);
    const { store, log } = this.deps;
    const rec = store.applyRecord(runId);
    if (rec?.apply.state !== 'applying' || rec.apply.startedAt !== undefined) return undefined;
    const refuse = (reason: string) => {
      log.warn({ runId, reason }, 'apply refused at the last check: nothing is applied');
      this.save({ ...rec.apply, state: 'refused', reason: cut(reason) }, rec, rec.counted);
      return undefined;
    };
    const a = applyConfigFor(this.deps.config, rec.apply.environment, rec.apply.component);
    if (!a)
      return refuse(
        `apply not enabled for ${rec.apply.environment}/${rec.apply.component} in the local config`,
      );
    const plan = await this.deps.planFiles.open(runId);
    if (!plan || plan.sha256 !== rec.planFileSha256)
      return refuse(`wrong hash: the saved plan file of run ${runId} is gone or changed`);
    const later = store.laterRun(plan.meta.environment, plan.meta.component, plan.meta.cellRef, runId);
    if (later) return refuse(`superseded by ${later}`);

    const startedAt = this.deps.now();
    const applying = this.save({ ...rec.apply, state: 'applying', startedAt }, rec, rec.counted);
    log.info(
      { runId, environment: rec.apply.environment, component: rec.apply.component },
      'applying the approved plan',
    );
    const r = await runApply(a.target, this.deps.config, this.deps.runDeps, plan);
    // A saved plan applies once: applied or not, the state moved on and the file is of no further use.
    await this.deps.planFiles.remove(runId).catch(() => {});
    const { reason: _r, ...base } = applying.apply;
    this.save(
      {
        ...base,
        state: r.state,
        startedAt: r.startedAt,
        finishedAt: r.finishedAt,
        ...(r.reason ? { reason: cut(r.reason) } : {}),
        ...(r.errorExcerpt ? { errorExcerpt: r.errorExcerpt.slice(0, 2000) } : {}),
      },
      applying,
      applying.counted,
    );
    if (r.excerptWithheld)
      log.warn(
        { runId, rule: r.excerptWithheld },
        'redaction scan hit in the apply output: the excerpt is withheld',
      );
    log.info({ runId, state: r.state, reason: r.reason }, 'apply finished');
    return runId;
  }

  /**
   * After a plan of `cell` was recorded as `runId`: keeps its saved plan (or drops it when the plan was
   * unchanged: no run of its own to approve), and names it the next plan of the run just applied.
   */
  async planRecorded(
    cell: CellRef,
    runId: string,
    result: RunPlanResult,
    unchanged: boolean,
    appliedRunId?: string,
  ): Promise<void> {
    const kept = result.keptPlan;
    if (kept) {
      if (unchanged) await this.deps.planFiles.discard(kept).catch(() => {});
      else
        await this.deps.planFiles
          .adopt(kept, {
            runId,
            environment: cell.environment,
            component: cell.component,
            ...(cell.ref ? { cellRef: cell.ref } : {}),
            ref: result.summary.ref ?? refOfCell(this.deps.config, cell),
            ...(result.summary.git?.commit ? { commit: result.summary.git.commit } : {}),
          })
          .catch((e) =>
            this.deps.log.warn({ runId, error: (e as Error).name }, 'the saved plan could not be kept'),
          );
    }
    if (!appliedRunId || unchanged) return;
    const rec = this.deps.store.applyRecord(appliedRunId);
    if (rec) this.save({ ...rec.apply, nextRunId: runId as DocApply['nextRunId'] }, rec, rec.counted);
  }

  /**
   * At start: an apply that had started when the agent stopped is `apply-failed` (never run twice: the
   * state may have changed); one whose quorum was met but had not started is queued again.
   */
  resume(): void {
    for (const rec of this.deps.store.appliesIn('applying')) {
      const a = rec.apply;
      if (a.startedAt !== undefined) {
        this.save(
          {
            ...a,
            state: 'apply-failed',
            reason: 'interrupted: the agent stopped during the apply; check the state before approving again',
            finishedAt: this.deps.now(),
          },
          rec,
          rec.counted,
        );
        continue;
      }
      const c = this.deps.config.components.find((x) => x.name === a.component);
      const cellRef = cellRefOf(c, a.ref);
      this.queued.set(queueKey(a.environment, a.component, cellRef), a.runId);
      this.deps.trigger({
        component: a.component,
        environment: a.environment,
        ...(cellRef ? { ref: cellRef } : {}),
      });
    }
  }
}

export { hubKeyProblem } from './hubKeyProblem.js';
