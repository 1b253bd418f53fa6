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

  /** The windows declared for `site`: the hub's config first, then its live agents'. */
  declared(site: string, agents: readonly AgentFacts[]): string[] {
    const fromAgents = agents.filter((a) => a.revokedAt === null).flatMap((a) => a.contactWindows);
    return [...new Set([...(this.settings.sites[site] ?? []), ...fromAgents])];
  }

  of(site: string, agents: readonly AgentFacts[], lastContactAt: number | null, now: number): SiteContact {
    if (lastContactAt !== null) this.history.record(site, lastContactAt);
    return siteContact({
      declared: this.declared(site, agents),
      history: this.history.contacts(site),
      lastContactAt,
      now,
      settings: this.settings,
    });
  }
}

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
