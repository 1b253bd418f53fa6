import { encodeBundle, type PlanRequestCreate } from '@driftline/protocol';
import type { Clock } from '../ports/Clock.js';
import type { HubStore, PlanRequestRow } from '../ports/HubStore.js';
import type { IdGen } from '../ports/IdGen.js';

export type CreateResult =
  | { ok: true; request: PlanRequestRow }
  | { ok: false; code: 'not-found' | 'unprocessable'; message: string };

/**
 * Plan requests (DESIGN "One plan result's trip", step 1; S3): the hub asks, signed with its key,
 * for a cell the agent already plans; the agent decides. pending → delivered (a peer pulled it) →
 * done (a run for that cell started after the request arrived) or expired.
 */
export class PlanRequests {
  constructor(
    private readonly d: { store: HubStore; clock: Clock; ids: IdGen; hubPrivateKey: CryptoKey; ttlS: number },
  ) {}

  async create(req: PlanRequestCreate): Promise<CreateResult> {
    const { store, clock } = this.d;
    const agents = await store.listAgents(req.site);
    if (agents.length === 0)
      return { ok: false, code: 'not-found', message: `site '${req.site}' has no enrolled agent` };
    const key = `${req.environment}/${req.component}`;
    const cell = await store.getCell(req.site, req.environment, req.component);
    const agent = cell?.agent ?? agents.find((a) => key in a.cadenceS)?.agent;
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
    };
    const bytes = await encodeBundle(
      {
        id: this.d.ids.next() as never,
        kind: 'control',
        source: 'hub',
        destination: { site: req.site, agent: agent as never },
        created: now,
        lifetimeS: this.d.ttlS,
        priority: 'control',
      },
      {
        type: 'plan-request',
        requestId: row.requestId,
        site: req.site,
        environment: req.environment,
        component: req.component,
        requestedAt: now,
        expiresAt: row.expiresAt,
      },
      this.d.hubPrivateKey,
    );
    await store.commit({
      planRequests: [row],
      downlink: [
        {
          site: req.site,
          agent,
          kind: 'control',
          docId: null,
          requestId: row.requestId,
          bytes,
          expiresAt: row.expiresAt,
        },
      ],
    });
    return { ok: true, request: row };
  }
}
