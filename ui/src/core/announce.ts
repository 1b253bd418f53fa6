import type { HubEvent } from '@driftline/protocol';
import { statusText } from './status.js';

/** The sentence a screen reader hears for a live event, or null for events not worth a word. */
export function announcementFor(e: HubEvent): string | null {
  switch (e.type) {
    case 'cell-updated': {
      const c = e.cell;
      return `${c.site} ${c.environment}/${c.component} is now ${statusText(c.status, c.counts, c.reason)}`;
    }
    case 'site-updated':
      return e.site.unreachable ? `site ${e.site.site} is unreachable` : null;
    case 'plan-request-updated':
      return `plan request for ${e.request.site} ${e.request.environment}/${e.request.component}: ${e.request.state}`;
    default:
      return null;
  }
}

/** Many events in one burst become one sentence, so the reader is not flooded. */
export function summarise(messages: string[]): string {
  if (messages.length <= 1) return messages[0] ?? '';
  return `${messages.length} updates; latest: ${messages[messages.length - 1]}`;
}
