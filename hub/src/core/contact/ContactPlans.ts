import { cellAgainstContact, type MatrixCell, type SiteContact } from '@driftline/protocol';
import type { AgentFacts } from '../../ports/HubStore.js';
import { ContactHistory } from './ContactHistory.js';
import { type ContactPlanSettings, siteContact } from './siteContact.js';

/**
 * Every site's contact plan (declared or learned) and where the site stands against it; the history it
 * learns from is fed by each read of a site's last contact and by every ingest (`record`).
 */
export class ContactPlans {
  readonly history: ContactHistory;

  constructor(readonly settings: ContactPlanSettings) {
    this.history = new ContactHistory(settings.learnSilenceMs);
  }

  /** A contact from `site` at `at` (hub time). */
  record(site: string, at: number): void {
    this.history.record(site, at);
  }

  /**
   * The windows `site` is judged by: those its live agents declare, and those the hub's config declares
   * that a live agent says it holds (its `hubWindows` fact); the hub's others are `unconfirmed`, sent down
   * and shown, never judged (docs/decisions/590-windows-declared-once.md).
   */
  declared(site: string, agents: readonly AgentFacts[]): { judged: string[]; unconfirmed: string[] } {
    const live = agents.filter((a) => a.revokedAt === null);
    const held = new Set(live.flatMap((a) => a.hubWindows ?? []));
    const atHub = this.settings.sites[site] ?? [];
    const confirmed = atHub.filter((w) => held.has(w));
    return {
      judged: [...new Set([...confirmed, ...live.flatMap((a) => a.contactWindows)])],
      unconfirmed: atHub.filter((w) => !held.has(w)),
    };
  }

  of(site: string, agents: readonly AgentFacts[], lastContactAt: number | null, now: number): SiteContact {
    if (lastContactAt !== null) this.history.record(site, lastContactAt);
    const { judged, unconfirmed } = this.declared(site, agents);
    // The same question within one instant (a sweep asks it, then its judge and its notices) is answered
    // once: the judgment is a function of these alone (its windows, its history, the last contact, now).
    const key = `${now}|${lastContactAt}|${this.history.version(site)}|${judged.join('\n')}`;
    let hit = this.judged.get(site);
    if (hit?.key !== key) {
      const contact = siteContact({
        declared: judged,
        history: () => this.history.contacts(site),
        lastContactAt,
        now,
        settings: this.settings,
      });
      hit = { key, contact };
      if (this.judged.size >= MEMO_SITES) this.judged.clear();
      this.judged.set(site, hit);
    }
    const contact = { ...hit.contact, windows: [...hit.contact.windows] };
    return unconfirmed.length > 0 ? { ...contact, unconfirmed } : contact;
  }
  /** Each site's last judgment and what it was judged on ({@link of}). */
  private readonly judged = new Map<string, { key: string; contact: SiteContact }>();
}

/** Sites whose last judgment {@link ContactPlans.of} keeps (the history's own bound). */
const MEMO_SITES = 100_000;

/**
 * A cell judged against its site's plan: it carries the site's contact state and next window, is
 * unreachable only when the plan says so, and is stale only when its plan was already more than two
 * cadences old when the site was last heard from (plus the grace): silence between windows ages nothing.
 */
export function cellWithContact(
  cell: MatrixCell,
  contact: SiteContact,
  lastContactAt: number | null,
  now: number,
): MatrixCell {
  return contact.judged ? cellAgainstContact(cell, contact, lastContactAt, now) : cell;
}
