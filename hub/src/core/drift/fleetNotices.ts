import type { HubStore } from '../../ports/HubStore.js';
import type { Queries } from '../Queries.js';
import { relayInfos } from '../relayProblems.js';
import type { Drift } from './Drift.js';
import type { Notice } from './notices.js';

/**
 * `site.overdue` for each site its contact plan judges overdue, `relay.silent` for each relay whose
 * problems say `silent`: keyed by the site's last contact (the relay's last status), so one silence
 * notifies once however many sweeps see it (decision 421).
 */
export async function fleetNotices(d: {
  queries: Pick<Queries, 'siteContacts'>;
  store: Pick<HubStore, 'listPeers' | 'commit'>;
  clock: { now(): number };
  drift: Pick<Drift, 'webhooks'>;
}): Promise<void> {
  const now = d.clock.now();
  const notices: Notice[] = [];
  // Site rows and briefs, never the cells: this runs every sweep.
  for (const s of await d.queries.siteContacts(now)) {
    if (!s.contact.judged || s.contact.state !== 'overdue') continue;
    const lastContactAt = s.lastContactAt === null ? null : new Date(s.lastContactAt).toISOString();
    notices.push({
      event: 'site.overdue',
      subject: s.site,
      key: `${s.site}|${lastContactAt ?? 'never'}`,
      body: { site: s.site, lastContactAt, missedWindows: s.contact.missedWindows ?? 0 },
    });
  }
  for (const r of relayInfos(await d.store.listPeers(), now))
    if (r.problems.some((p) => p.code === 'silent'))
      notices.push({
        event: 'relay.silent',
        subject: r.name,
        key: `${r.name}|${r.reportedAt ?? 'never'}`,
        body: { relay: r.name, lastUsedAt: r.lastUsedAt, reportedAt: r.reportedAt },
      });
  const webhooks = notices.flatMap((n) => d.drift.webhooks(n, now));
  if (webhooks.length > 0) await d.store.commit({ webhooks });
}
