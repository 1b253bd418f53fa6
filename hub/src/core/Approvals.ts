import {
  type Approval,
  type ApprovalJourney,
  asAgentId,
  DEFAULT_REF,
  encodeBundle,
  verifyApproval,
} from '@driftline/protocol';
import type { Clock } from '../ports/Clock.js';
import type { ApprovalRow, PeopleStore, ReadStore, RunRow } from '../ports/HubStore.js';
import type { IdGen } from '../ports/IdGen.js';
import { toJourney } from './approvalJourney.js';
import { confirmBy } from './confirmBy.js';

/** Longest an approval may stay on the downlink: its expiry may be at most this far ahead. */
export const MAX_APPROVAL_LIFETIME_MS = 90 * 86_400_000;
/** Most journeys one `GET /api/approvals` answers. */
export const MAX_JOURNEYS = 200;
/**
 * Most unconfirmed approvals one resend pass reads, of all sites: approvals are people's decisions, so
 * even a large fleet holds hundreds, not tens of thousands; past it the rest wait for the next sweep.
 */
export const MAX_UNCONFIRMED = 10_000;

export type SubmitResult =
  | { ok: true; journey: ApprovalJourney; created: boolean }
  | { ok: false; code: 'unprocessable' | 'conflict'; message: string };

type Fail = Extract<SubmitResult, { ok: false }>;
const fail = (message: string, code: Fail['code'] = 'unprocessable'): Fail => ({ ok: false, code, message });

/**
 * Approvals relayed to sites (S3 in docs/architecture.md#invariants: the hub cannot make a site change anything). The hub checks
 * what it can, so that a person learns at once what the agent would refuse: the approver's signature,
 * the site, the run and its saved plan file. It then queues the approval, signed by the hub as relayed
 * control traffic, on the site's downlink; the agent decides with the approver keys it pins.
 */
export class Approvals {
  constructor(
    private readonly d: {
      store: PeopleStore & Pick<ReadStore, 'getRun' | 'listAgents' | 'listSites' | 'getCell' | 'getRefCell'>;
      clock: Clock;
      ids: IdGen;
      hubPrivateKey: CryptoKey;
      /** The hub's public key (`ed25519:…`): an approval signed with it is refused. */
      hubPublicKeyText: string;
      /** Contact interval assumed for an agent that declares none, seconds. */
      defaultContactIntervalS?: number | null;
    },
  ) {}

  /** When each unconfirmed approval was last sent again (this process; a restart sends each once more). */
  private readonly lastSent = new Map<string, number>();

  /** Checks and queues `value` (an `Approval` as JSON data) submitted by the user `by`. */
  async submit(value: unknown, by: string): Promise<SubmitResult> {
    const { store, clock } = this.d;
    const named = (value as { approver?: unknown } | null)?.approver;
    const check = await verifyApproval(value, typeof named === 'string' ? [named] : []);
    if (!check.ok) return fail(`approval refused: ${check.reason}`);
    const a = check.approval;
    // The hub relays approvals and never makes one (S6 in docs/architecture.md#invariants): not with its own key, and not with a key
    // no approver record holds, which no person at headquarters answers for (decision 250).
    if (a.approver === this.d.hubPublicKeyText)
      return fail(
        "approval refused: signed with the hub's own key; approvers sign with their own keys (`hub approver keygen`), never the hub's",
      );
    if (!(await store.listApprovers()).some((x) => x.key === a.approver))
      return fail(
        `approval refused: no approver record holds the key ${a.approver}; an admin adds it with \`hub approver add NAME --key ${a.approver}\`, or sign with a listed approver's key (GET /api/approvers)`,
      );
    const c = a.claims;
    const now = clock.now();
    if (c.expiresAt <= now)
      return fail(`approval refused: expired at ${new Date(c.expiresAt).toISOString()}; sign a new one`);
    if (c.expiresAt <= c.approvedAt)
      return fail('approval refused: claims.expiresAt must be after claims.approvedAt');
    if (c.expiresAt - now > MAX_APPROVAL_LIFETIME_MS)
      return fail(
        'approval refused: claims.expiresAt is more than 90 days away; sign one that expires sooner',
      );
    const existing = await store.getApproval(c.approvalId);
    if (existing) {
      if (existing.approver !== a.approver || existing.runId !== c.runId || existing.site !== c.site)
        return fail(`approval id ${c.approvalId} is already used by another approval`, 'conflict');
      return { ok: true, journey: await this.journeyOf(existing), created: false };
    }
    const agents = await store.listAgents(c.site);
    if (agents.length === 0) return fail(`approval refused: site '${c.site}' has no enrolled agent`);
    const run = await store.getRun(c.runId);
    if (!run || run.site !== c.site)
      return fail(`approval refused: no run '${c.runId}' at site '${c.site}' (see GET /api/runs/${c.runId})`);
    const problem = mismatch(a, run) ?? (await this.outdated(run));
    if (problem) return fail(`approval refused: ${problem}`);
    const row: ApprovalRow = {
      approvalId: c.approvalId,
      site: c.site,
      runId: c.runId,
      environment: c.environment,
      component: c.component,
      ref: c.ref,
      commit: c.commit,
      planFileSha256: c.planFileSha256,
      approver: a.approver,
      approvedAt: c.approvedAt,
      expiresAt: c.expiresAt,
      submittedBy: by,
      submittedAt: now,
      deliveredAt: null,
      signature: a.signature,
      ...confirmBy(
        agents.find((x) => x.agent === run.agent),
        now,
        this.d.defaultContactIntervalS,
      ),
    };
    await store.commit({ approvals: [row], downlink: [await this.downlinkRow(a, run.agent, now)] });
    return { ok: true, journey: await this.journeyOf(row), created: true };
  }

  /**
   * Sends again every approval its agent has not confirmed (decision 300): not named in the agent's
   * record past its `confirmBy`, it goes on the downlink once more (a new bundle replacing the old row,
   * the same approval: the agent counts an approval id once) every span it had to confirm. Reads at most
   * `MAX_UNCONFIRMED` approvals of all sites (docs/decisions/605-one-read-of-unconfirmed-approvals.md).
   * Answers the approvals sent again.
   */
  async resendUnconfirmed(): Promise<ApprovalRow[]> {
    const { store, clock } = this.d;
    const now = clock.now();
    const out: ApprovalRow[] = [];
    const open = new Set<string>();
    // One read of every site's unconfirmed approvals (an index of them), not each site's 200 oldest in
    // turn: at 1,000 sites that was 1,000 reads a sweep, and a site's 201st approval was never sent again.
    for (const r of await store.listUnconfirmedApprovals(MAX_UNCONFIRMED)) {
      if (r.confirmBy == null || !r.signature || r.expiresAt <= now) continue;
      open.add(r.approvalId);
      if (now < r.confirmBy) continue;
      const last = this.lastSent.get(r.approvalId);
      if (last !== undefined && now - last < r.confirmBy - r.submittedAt) continue;
      const run = await store.getRun(r.runId);
      if (!run) continue;
      this.lastSent.set(r.approvalId, now);
      out.push(r);
      const approval: Approval = {
        claims: {
          v: 1,
          approvalId: r.approvalId,
          site: r.site as Approval['claims']['site'],
          environment: r.environment,
          component: r.component,
          ref: r.ref,
          commit: r.commit,
          runId: r.runId as Approval['claims']['runId'],
          planFileSha256: r.planFileSha256 as Approval['claims']['planFileSha256'],
          approvedAt: r.approvedAt,
          expiresAt: r.expiresAt,
        },
        approver: r.approver,
        signature: r.signature,
      };
      await store.commit({ downlink: [await this.downlinkRow(approval, run.agent, now)] });
    }
    for (const id of this.lastSent.keys()) if (!open.has(id)) this.lastSent.delete(id);
    return out;
  }

  /**
   * Why the run can no longer be applied, as far as the hub knows, or null (issue 42: refused here, before
   * anything travels, instead of by the agent a link round trip later). The agent decides again with what
   * it holds (`checkApproval.ts`); these are the same reasons, read from what it reported:
   * - **already applied**: the agent's record of the run says applying, applied or apply-failed;
   * - **stale**: another run of the same cell was applied after this one was planned: its saved plan was
   *   made against a state that changed since (Terraform refuses it: "Saved plan is stale");
   * - **superseded**: the cell's latest run is a later plan that found something else (a confirmation of
   *   the same plan is not one).
   */
  private async outdated(run: RunRow): Promise<string | null> {
    const { store } = this.d;
    const applies = await store.listApplies(run.site);
    const own = applies.find((x) => x.runId === run.runId);
    if (own && (own.state === 'applying' || own.state === 'applied' || own.state === 'apply-failed'))
      return `already applied: run '${run.runId}' is ${own.state} at site '${run.site}'${own.finishedAt ? ` (${new Date(own.finishedAt).toISOString()})` : ''}; approve its next plan instead`;
    const sameCell = applies.find(
      (x) =>
        x.runId !== run.runId &&
        x.environment === run.environment &&
        x.component === run.component &&
        x.state === 'applied' &&
        (x.finishedAt ?? x.updatedAt) > run.plannedAt,
    );
    if (sameCell)
      return `stale: run '${sameCell.runId}' of ${run.environment}/${run.component} was applied at ${new Date(sameCell.finishedAt ?? sameCell.updatedAt).toISOString()}, after run '${run.runId}' was planned; its saved plan no longer matches the state (approve a plan made since)`;
    const cell = run.atRef
      ? await store.getRefCell(run.site, run.environment, run.component, run.atRef)
      : await store.getCell(run.site, run.environment, run.component);
    if (cell && cell.runId !== run.runId && cell.plannedAt > run.plannedAt) {
      const later = await store.getRun(cell.runId);
      if (!later?.unchanged)
        return `superseded by run '${cell.runId}' (planned ${new Date(cell.plannedAt).toISOString()}, ${cell.status}): approve the cell's latest plan`;
    }
    return null;
  }

  /** The approval's control bundle, signed by the hub, as a downlink row (replacing any earlier one). */
  private async downlinkRow(a: Approval, agent: string, now: number) {
    const c = a.claims;
    const bytes = await encodeBundle(
      {
        id: this.d.ids.next(),
        kind: 'control',
        source: 'hub',
        destination: { site: c.site, agent: asAgentId(agent) },
        created: now,
        lifetimeS: Math.max(1, Math.ceil((c.expiresAt - now) / 1000)),
        priority: 'control',
      },
      { type: 'approval', site: c.site, approval: a },
      this.d.hubPrivateKey,
    );
    return {
      site: c.site,
      agent,
      kind: 'control' as const,
      docId: null,
      requestId: c.approvalId,
      // The same approval queued twice (a race past the check above) stays one row.
      replaceKey: `approval:${c.approvalId}`,
      bytes,
      expiresAt: c.expiresAt,
    };
  }

  /** The journeys of a site's approvals (of one run when given), oldest first. */
  async journeys(site: string, runId?: string): Promise<ApprovalJourney[]> {
    const { store } = this.d;
    const rows = await store.listApprovals({ site, ...(runId ? { runId } : {}), limit: MAX_JOURNEYS });
    if (rows.length === 0) return [];
    const applies = await store.listApplies(site, [...new Set(rows.map((r) => r.runId))]);
    const approvers = await store.listApprovers();
    const now = this.d.clock.now();
    return rows.map((r) =>
      toJourney(
        r,
        applies.find((x) => x.runId === r.runId),
        approvers,
        now,
      ),
    );
  }

  private async journeyOf(row: ApprovalRow): Promise<ApprovalJourney> {
    const [apply] = await this.d.store.listApplies(row.site, [row.runId]);
    return toJourney(row, apply, await this.d.store.listApprovers(), this.d.clock.now());
  }
}

/** What in the claims does not match the run the hub holds, or null. */
function mismatch(a: Approval, run: RunRow): string | null {
  const c = a.claims;
  if (run.environment !== c.environment || run.component !== c.component)
    return `run '${run.runId}' is of ${run.environment}/${run.component}, not ${c.environment}/${c.component}`;
  const ref = run.ref ?? DEFAULT_REF;
  if (ref !== c.ref) return `run '${run.runId}' planned ref '${ref}', not '${c.ref}'`;
  if (!run.commit) return `run '${run.runId}' names no commit; only a plan of a known commit can be approved`;
  if (run.commit !== c.commit) return `run '${run.runId}' planned commit ${run.commit}, not ${c.commit}`;
  const sha = run.summary.planFileSha256;
  if (!sha)
    return `run '${run.runId}' kept no saved plan file: apply is not enabled for ${c.environment}/${c.component} at site '${c.site}' (apply in its agent.yaml)`;
  if (sha !== c.planFileSha256)
    return `plan file hash mismatch: run '${run.runId}' saved a plan with sha256 ${sha}, the approval names ${c.planFileSha256}`;
  if (run.status !== 'changes' && run.status !== 'drift' && run.status !== 'clean')
    return `run '${run.runId}' ended '${run.status}': only a finished plan can be applied`;
  return null;
}
