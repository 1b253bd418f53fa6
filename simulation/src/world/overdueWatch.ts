import type { FleetResponse } from '@driftline/protocol';
import type { Invariant } from './invariant.js';
import type { World } from './World.js';

const MIN = 60_000;
/**
 * How often the operator looks at the fleet, ms: a false alarm lasts from a window's end (and grace) to the
 * next window, hours in a world's contact plan, so a look every 30 minutes sees each one
 * (`hubWindows.test.ts` found a look every 5 minutes was most of a week's time).
 */
const LOOK_MS = 30 * MIN;

/** What the operator saw of one site at one look, when the hub called it silent. */
interface Alarm {
  site: string;
  at: number;
  state: string;
  missed: number;
}

/**
 * No site overdue while its windows are met (issue 56's invariant, docs/decisions/540-deterministic-world.md):
 * through the days the operator looks at `/api/fleet` every {@link LOOK_MS}, as the dashboard does, and
 * notes each site the hub calls `overdue` or `unreachable`. Where nothing loses, delays or stops on purpose
 * (no faults), every site meets every window it has, so one such look is a false alarm and breaks it; with
 * faults a site may truly miss a window, and the looks are figures only.
 */
export class OverdueWatch {
  private looks = 0;
  /** Looks at a site the hub judged by its windows (the agent holds them). */
  private judged = 0;
  private readonly alarms: Alarm[] = [];
  private readonly failed: string[] = [];

  constructor(private readonly world: World) {}

  /** A look every {@link LOOK_MS} until `daysMs` from now: world timers. */
  schedule(daysMs: number): void {
    const end = Date.now() + daysMs;
    const look = () => {
      if (Date.now() >= end) return;
      void this.look();
      setTimeout(look, LOOK_MS);
    };
    setTimeout(look, LOOK_MS);
  }

  private async look(): Promise<void> {
    try {
      const fleet = await this.world.hubApi<FleetResponse>('/api/fleet', true);
      this.looks++;
      const at = Date.now();
      for (const s of fleet.sites) {
        if (!s.contact?.judged) continue;
        this.judged++;
        if (s.contact.state === 'overdue' || s.contact.state === 'unreachable')
          this.alarms.push({
            site: s.site,
            at,
            state: s.contact.state,
            missed: s.contact.missedWindows ?? 0,
          });
      }
    } catch (e) {
      // the hub down (the crash fault): the operator sees nothing this look
      if (this.failed.length < 3) this.failed.push((e as Error).message);
    }
  }

  invariants(strict: boolean): Invariant[] {
    const figures = `${this.looks} looks at the fleet, ${this.judged} at sites judged by their windows, ${this.alarms.length} called overdue or unreachable${this.failed.length > 0 ? ` (looks that failed: ${this.failed.join('; ')})` : ''}`;
    if (!strict) return [];
    const first = this.alarms
      .slice(0, 3)
      .map((a) => `${a.site} ${a.state} at ${new Date(a.at).toISOString()} (${a.missed} windows missed)`);
    return [
      {
        name: 'no site overdue while its windows are met (looked at every 30 min)',
        held: this.alarms.length === 0 && this.judged > 0,
        detail: this.alarms.length === 0 ? figures : `${figures}: ${first.join('; ')}`,
      },
    ];
  }
}
