import { FLEET_MOVED_SITES, type HubEvent } from '@driftline/protocol';

/** An event as the log numbered it. */
export interface NumberedEvent {
  id: string;
  event: HubEvent;
}

/** What a later event of the same subject replaces: one cell, one site, the fleet's batch summary. */
function subject(e: HubEvent): string | null {
  switch (e.type) {
    case 'cell-updated':
      return `cell ${e.cell.site}/${e.cell.environment}/${e.cell.component}`;
    case 'site-updated':
      return `site ${e.site.site}`;
    case 'fleet-moved':
      return 'fleet';
    case 'plan-request-updated':
      return `request ${e.request.requestId}`;
    default:
      return null;
  }
}

/**
 * The events one client gets in one flush (decision 402): a cell, site or plan request's newer event
 * replaces its older one, `fleet-moved` events merge into one (sites united, counts summed, the newest
 * totals), everything else is kept in order. Each stays where its newest input was, with that input's
 * id, so the ids a client sees still grow and its `Last-Event-ID` resumes after all it was sent. Pure.
 */
export function coalesceEvents(events: readonly NumberedEvent[]): NumberedEvent[] {
  const out = new Map<string, NumberedEvent>();
  let n = 0;
  for (const { id, event } of events) {
    const key = subject(event) ?? `#${n++}`;
    const prev = out.get(key)?.event;
    out.delete(key);
    if (prev?.type === 'fleet-moved' && event.type === 'fleet-moved') {
      const sites = [...new Set([...prev.sites, ...event.sites])].sort();
      out.set(key, {
        id,
        event: {
          ...event,
          sites: sites.slice(0, FLEET_MOVED_SITES),
          moreSites: prev.moreSites || event.moreSites || sites.length > FLEET_MOVED_SITES,
          changed: prev.changed + event.changed,
          confirmed: prev.confirmed + event.confirmed,
        },
      });
    } else out.set(key, { id, event });
  }
  return [...out.values()];
}
