import { type ContactWindowsPayload, parseWindow } from '@driftline/protocol';
import type { AgentStorage } from '../../ports/AgentStorage.js';
import type { Logger } from '../../ports/Logger.js';

const KEY = 'hub-windows';

/** The hub's declared windows this agent holds, as its last `contact-windows` control said them. */
export interface HeldWindows {
  windows: string[];
  /** The control's `declaredAt` (hub clock): an older one never replaces it. */
  declaredAt: number;
}

/**
 * The contact windows the hub declares for this agent's site (`contactPlans.sites` in hub.yaml), kept in
 * the agent's database across restarts (docs/decisions/590-windows-declared-once.md). The agent aims at
 * them beside its own `sync.contactWindows` and says it holds them (its `hubWindows` fact), which is when
 * the hub starts judging the site by them. A control for another site or agent, or older than the one
 * held, changes nothing; a window this agent's parser does not read is left out (logged), so the fact
 * names only what the agent really aims at.
 */
export class HubWindowsHeld {
  private held: HeldWindows | null;

  constructor(
    private readonly storage: Pick<AgentStorage, 'meta' | 'commit'>,
    private readonly who: { site: string; agent: string },
    private readonly log: Logger,
  ) {
    this.held = read(storage.meta(KEY));
  }

  /** The windows held now (none: empty). */
  windows(): string[] {
    return [...(this.held?.windows ?? [])];
  }

  /** Takes a verified control; true when the windows held changed. */
  take(c: ContactWindowsPayload): boolean {
    if (c.site !== this.who.site || c.agent !== this.who.agent) return false;
    if (this.held && c.declaredAt <= this.held.declaredAt) return false;
    const windows: string[] = [];
    for (const w of c.windows) {
      const r = parseWindow(w);
      if (r.ok) windows.push(w);
      else
        this.log.warn(
          { window: w, why: r.error },
          'a contact window the hub declared is not read by this agent: left out',
        );
    }
    const before = this.windows();
    this.held = { windows, declaredAt: c.declaredAt };
    this.storage.commit({ meta: { [KEY]: JSON.stringify(this.held) } });
    const changed = before.join('\n') !== windows.join('\n');
    if (changed)
      this.log.info(
        { windows, declaredAt: new Date(c.declaredAt).toISOString() },
        windows.length > 0
          ? 'the hub declared contact windows for this site: the agent aims at them and says it is there in each'
          : 'the hub withdrew the contact windows it had declared for this site',
      );
    return changed;
  }
}

/** The hub's windows an agent's database holds (`edge-agent status` reads it beside the daemon). */
export function readHubWindows(storage: Pick<AgentStorage, 'meta'>): string[] {
  return read(storage.meta(KEY))?.windows ?? [];
}

function read(text: string | undefined): HeldWindows | null {
  if (!text) return null;
  try {
    const v = JSON.parse(text) as unknown;
    if (
      typeof v === 'object' &&
      v !== null &&
      Array.isArray((v as HeldWindows).windows) &&
      (v as HeldWindows).windows.every((w) => typeof w === 'string') &&
      typeof (v as HeldWindows).declaredAt === 'number'
    )
      return v as HeldWindows;
  } catch {
    // a damaged record reads as none: the hub sends the windows again until the fact names them
  }
  return null;
}
