import { asSiteId } from '@driftline/protocol';
import type { DirectionSettings } from '../core/link/settings.js';
import { seededRandom } from '../core/rng.js';
import type { Invariant } from './invariant.js';
import { RELAY, type World } from './World.js';

const DAY = 86_400_000;

/** One plan request the world made at headquarters, when, and the first contact that could carry it. */
interface Made {
  requestId: string;
  site: string;
  at: number;
  /** The latest its agent may have it (from the links' schedules as they were then); Infinity: none could. */
  dueBy: number;
}

/** What one request's journey came to, judged against the first contact that could carry it. */
interface Judged extends Made {
  /** When its agent had it (the agent's record); null: never. */
  deliveredAt: number | null;
  /** Its agent took it (not refused or expired on arrival). */
  accepted: boolean;
  expiresAt: number;
  /** The latest the bound allows; null: no contact could carry it before it expired (not judged). */
  due: number | null;
}

const worst = (d: DirectionSettings) => d.delayMs + d.jitterMs;

/**
 * Control at the first contact that could carry it (issue 56's invariant, docs/decisions/540-deterministic-world.md):
 * the world asks each site for a plan four times a day, each at an instant drawn from the seed, as an operator would
 * (`PlanRequests.create`, what `POST /api/plan-requests` calls), then judges each request by the hub's own
 * record of it. The first contact that could carry a request is the first instant, once it is at the relay
 * (the relay's link both ways), from which the site's link stays up for 1.2 of its round trips; from there
 * the request must be at the agent (the agent's own record of it) within 1.2 round trips: time for a pull
 * to go up and its answer to come down, and no more, wherever the request waited. A request no contact could
 * carry before it expired must not be delivered. Faults that lose or delay exchanges on purpose (`links`,
 * `crash`, `hostile`) or make the agent's word of the time wrong (`clock`) leave only the second rule and
 * "every request carried or expired", with the figures.
 */
export class ControlWatch {
  private readonly made: Made[] = [];
  private readonly notMade: string[] = [];

  constructor(private readonly world: World) {}

  /** Four requests per site per day, each at an instant of its quarter of the day drawn from the seed. */
  schedule(seed: number, days: number): void {
    const random = seededRandom(`${seed}:control`);
    for (const site of this.world.sites) {
      for (let q = 0; q < Math.ceil(days * 4); q++) {
        const at = Math.floor(((q + random()) * DAY) / 4);
        if (at >= days * DAY) continue;
        setTimeout(() => void this.make(site.name), at);
      }
    }
  }

  private async make(site: string): Promise<void> {
    const at = Date.now();
    try {
      const r = await this.world.hub.planRequests.create({
        site: asSiteId(site),
        environment: 'prod',
        component: 'stack-0',
      });
      if (r.ok) this.made.push({ requestId: r.request.requestId, site, at, dueBy: this.dueBy(site, at) });
      else this.notMade.push(`${site}: ${r.message}`);
    } catch (e) {
      // the hub is down (the crash fault): an operator's call fails too
      this.notMade.push(`${site}: ${(e as Error).message}`);
    }
  }

  /**
   * The first contact that could carry a request made at `at`, and 1.2 round trips of the site's link from
   * then: read as it is made, from the links' schedules (the drain opens every link for good).
   */
  private dueBy(site: string, at: number): number {
    const relay = this.world.net.link(RELAY, 'hub');
    const relayRtt = relay ? worst(relay.settings.uplink) + worst(relay.settings.downlink) : 0;
    const link = this.world.net.link(site, RELAY);
    if (!link) return Number.POSITIVE_INFINITY;
    const rtt = worst(link.settings.uplink) + worst(link.settings.downlink);
    const atRelay = at + relayRtt + (relay?.msUntilUpFor(at, relayRtt) ?? 0);
    return atRelay + link.msUntilUpFor(atRelay, 1.2 * rtt) + 1.2 * rtt;
  }

  /** Each request as the hub and its agent recorded it, with the bound its site's link set. */
  private async judged(end: number): Promise<Judged[]> {
    const out: Judged[] = [];
    for (const m of this.made) {
      const row = await this.world.hub.store.getPlanRequest(m.requestId);
      const site = this.world.sites.find((s) => s.name === m.site);
      if (!row || !site) continue;
      // the agent's own record: when it had the request, and whether it took it (a request past its
      // expiry is recorded `expired` and not acted on); the hub hears of it only on a later push
      const mine = site.agent?.storage.planRequest(m.requestId);
      out.push({
        ...m,
        deliveredAt: mine?.receivedAt ?? null,
        accepted: mine?.state === 'accepted',
        expiresAt: row.expiresAt,
        // judged where a contact could carry it before it expired, and before the days ended (the drain
        // after them runs only until the runs are in)
        due: m.dueBy <= Math.min(row.expiresAt, end) ? m.dueBy : null,
      });
    }
    return out;
  }

  /**
   * The invariants, read after the drain; `strict`: no fault that loses, delays or misdates on purpose;
   * `end`: when the days ended.
   */
  async invariants(strict: boolean, end: number): Promise<Invariant[]> {
    const all = await this.judged(end);
    const afterExpiry = all.filter((j) => j.accepted && (j.deliveredAt as number) > j.expiresAt);
    const neither = all.filter((j) => j.deliveredAt === null && j.due !== null);
    const late = all.filter((j) => j.due !== null && j.deliveredAt !== null && j.deliveredAt > j.due);
    const carried = all.filter((j) => j.deliveredAt !== null);
    const lightTimes = carried
      .map((j) => (j.deliveredAt as number) - j.at)
      .sort((a, b) => a - b)
      .map((ms) => Math.round(ms / 1000));
    const median = lightTimes[Math.floor(lightTimes.length / 2)] ?? 0;
    const figures = `${all.length} made (${this.notMade.length} refused: site not known yet or hub down), ${carried.length} at their agents (median ${median} s after they were made, longest ${lightTimes.at(-1) ?? 0} s), ${all.length - carried.length} never`;
    const name = (j: Judged) =>
      `${j.site} ${j.requestId} made ${new Date(j.at).toISOString()} delivered ${j.deliveredAt === null ? 'never' : new Date(j.deliveredAt).toISOString()}`;
    const rules: Invariant[] = [
      {
        name: 'no plan request acted on after it expired',
        held: afterExpiry.length === 0,
        detail:
          afterExpiry.length === 0
            ? figures
            : `${afterExpiry.length} taken by their agents after they expired: ${afterExpiry.slice(0, 3).map(name).join('; ')}`,
      },
    ];
    if (!strict) return rules;
    const broken = [...late, ...neither];
    rules.push({
      name: 'control at the first contact that could carry it (≤ 1.2 round trips of the site link from then)',
      held: broken.length === 0,
      detail:
        broken.length === 0
          ? `${all.filter((j) => j.due !== null).length} requests a contact could carry, each at its agent in time`
          : `${late.length} late, ${neither.length} never carried though a contact could: ${broken
              .slice(0, 3)
              .map((j) => `${name(j)}, due by ${new Date(j.due as number).toISOString()}`)
              .join('; ')}`,
    });
    return rules;
  }
}
