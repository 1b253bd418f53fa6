import {
  asAgentId,
  asSiteId,
  CommitSchema,
  cellKey,
  encodeBundle,
  type PlanRequestCreate,
  refMatches,
  refNameProblem,
} from '@driftline/protocol';
import type { Clock } from '../ports/Clock.js';
import type { AgentRow, PlanRequestRow, ReadStore, StoreWrites } from '../ports/HubStore.js';
import type { IdGen } from '../ports/IdGen.js';
import { confirmBy } from './confirmBy.js';

export { CONFIRM_WINDOWS } from './confirmBy.js';

export type CreateResult =
  | { ok: true; request: PlanRequestRow }
  | { ok: false; code: 'not-found' | 'unprocessable'; message: string };

/**
 * Plan requests (step 1 of docs/architecture.md#the-trip; S3): the hub asks, signed with its key,
 * for a cell the agent already plans; the agent decides. pending (at a relay once one pulled it) →
 * delivered (the agent's word; an older agent's: a peer pulled it) → running (the agent's word that the
 * plan started, decision 560) → done (a run for that cell started after the request arrived), or
 * expired, or refused by the agent.
 */
export class PlanRequests {
  /** When each unconfirmed request was last sent again (this process; a restart sends each once more). */
  private readonly lastSent = new Map<string, number>();

  constructor(
    private readonly d: {
      store: StoreWrites & ReadStore;
      clock: Clock;
      ids: IdGen;
      hubPrivateKey: CryptoKey;
      ttlS: number;
      /** Contact interval assumed for an agent that declares none, seconds. */
      defaultContactIntervalS?: number | null;
    },
  ) {}

  async create(req: PlanRequestCreate): Promise<CreateResult> {
    const { store, clock } = this.d;
    const agents = await store.listAgents(req.site);
    if (agents.length === 0)
      return { ok: false, code: 'not-found', message: `site '${req.site}' has no enrolled agent` };
    const key = cellKey(req.environment, req.component);
    const refProblem = checkRef(req, agents);
    if (refProblem) return { ok: false, code: 'unprocessable', message: refProblem };
    const cell = await store.getCell(req.site, req.environment, req.component);
    const agent = req.ref
      ? agents.find((a) => a.revokedAt === null && allows(a, key, req.ref as string))?.agent
      : (cell?.agent ?? agents.find((a) => key in a.cadenceS)?.agent);
    if (!agent) {
      return {
        ok: false,
        code: 'unprocessable',
        message: `site '${req.site}' does not plan '${key}' (an agent can only be asked to plan a cell its own config lists)`,
      };
    }
    if (agents.find((a) => a.agent === agent)?.revokedAt !== null) {
      return { ok: false, code: 'unprocessable', message: `agent '${req.site}/${agent}' is revoked` };
    }
    const now = clock.now();
    const row: PlanRequestRow = {
      requestId: this.d.ids.next(),
      site: req.site,
      agent,
      environment: req.environment,
      component: req.component,
      state: 'pending',
      requestedAt: now,
      expiresAt: now + this.d.ttlS * 1000,
      deliveredAt: null,
      doneAt: null,
      runId: null,
      ...(req.ref ? { ref: req.ref } : {}),
      ...(req.commit ? { commit: req.commit } : {}),
      ...confirmBy(
        agents.find((a) => a.agent === agent),
        now,
        this.d.defaultContactIntervalS,
      ),
    };
    await store.commit({ planRequests: [row], downlink: [await this.downlinkRow(row, now)] });
    return { ok: true, request: row };
  }

  /**
   * Sends again every request its agent has not confirmed (decision 230): still `pending` past its
   * `confirmBy`, it goes on the downlink once more every `CONFIRM_WINDOWS` contact intervals (a new
   * bundle, the same request id: the agent acts on an id once). Only downlink rows are written, so a
   * concurrent ingest that answers the request is never overwritten. Answers the requests sent again.
   */
  async resendUnconfirmed(): Promise<PlanRequestRow[]> {
    const { store, clock } = this.d;
    const now = clock.now();
    const out: PlanRequestRow[] = [];
    const open = await store.listPlanRequests({ open: true });
    const live = new Set(open.map((r) => r.requestId));
    for (const id of this.lastSent.keys()) if (!live.has(id)) this.lastSent.delete(id);
    for (const req of open) {
      if (req.state !== 'pending' || req.confirmBy == null || now < req.confirmBy || req.expiresAt <= now)
        continue;
      const every = req.confirmBy - req.requestedAt;
      const last = this.lastSent.get(req.requestId);
      if (last !== undefined && now - last < every) continue;
      this.lastSent.set(req.requestId, now);
      out.push(req);
    }
    if (out.length > 0)
      await store.commit({ downlink: await Promise.all(out.map((r) => this.downlinkRow(r, now))) });
    return out;
  }

  /** The request's control bundle, signed by the hub, as a downlink row. */
  private async downlinkRow(row: PlanRequestRow, now: number) {
    const bytes = await encodeBundle(
      {
        id: this.d.ids.next(),
        kind: 'control',
        source: 'hub',
        destination: { site: asSiteId(row.site), agent: asAgentId(row.agent) },
        created: now,
        lifetimeS: Math.max(1, Math.ceil((row.expiresAt - now) / 1000)),
        priority: 'control',
      },
      {
        type: 'plan-request',
        requestId: row.requestId,
        site: asSiteId(row.site),
        environment: row.environment,
        component: row.component,
        ...(row.ref ? { ref: row.ref } : {}),
        ...(row.commit ? { commit: row.commit } : {}),
        requestedAt: row.requestedAt,
        expiresAt: row.expiresAt,
      },
      this.d.hubPrivateKey,
    );
    return {
      site: row.site,
      agent: row.agent,
      kind: 'control' as const,
      docId: null,
      requestId: row.requestId,
      bytes,
      expiresAt: row.expiresAt,
    };
  }
}

const allows = (a: AgentRow, key: string, ref: string) =>
  (a.refs?.[key] ?? []).some((p) => refMatches(p, ref));

/**
 * Why a request's `ref` or `commit` cannot be asked for, or null: a ref must be a ref name the
 * component's ref patterns (as its agents report them) allow; a commit, a full commit id of a component
 * with a repository. The agent checks the same against its own config (S3 in docs/architecture.md#invariants).
 */
function checkRef(req: PlanRequestCreate, agents: readonly AgentRow[]): string | null {
  if (req.ref === undefined && req.commit === undefined) return null;
  if (req.ref !== undefined) {
    const problem = refNameProblem(req.ref);
    if (problem) return `field 'ref': ${problem}`;
  }
  if (req.commit !== undefined && !CommitSchema.safeParse(req.commit).success)
    return `field 'commit': '${req.commit}' is not a full commit id (40 or 64 hex digits, lower case)`;
  const key = cellKey(req.environment, req.component);
  const patterns = [
    ...new Set(agents.filter((a) => a.revokedAt === null).flatMap((a) => a.refs?.[key] ?? [])),
  ];
  if (patterns.length === 0)
    return `component '${req.component}' (${req.environment}) at site '${req.site}' plans no refs: its agent reports no git source for it (source.refs in agent.yaml)`;
  if (req.ref !== undefined && !patterns.some((p) => refMatches(p, req.ref as string)))
    return `component '${req.component}' (${req.environment}) at site '${req.site}' may plan only refs [${patterns.join(', ')}], not '${req.ref}' (its source.refs in agent.yaml)`;
  return null;
}
