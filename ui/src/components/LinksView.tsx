import type { FleetSite, PlanRequest, PublicationListItem, SiteDetail } from '@driftline/protocol';
import { contactNow } from '../core/contact.js';
import { expectedContactText } from '../core/expectedContact.js';
import { linkFromDetail, linkSentence, liveLink, nextWindow } from '../core/link.js';
import { formatBytes, pendingAt } from '../core/publications.js';
import { type BehindRelay, behindRelay, sentenceBehind } from '../core/relayBehind.js';
import type { Route } from '../core/route.js';
import { formatAbsolute, formatAgo, formatDuration } from '../core/time.js';
import {
  unconfirmedAt,
  unconfirmedPublicationsAt,
  unconfirmedText,
  unconfirmedTitle,
} from '../core/unconfirmed.js';
import { useFleet } from '../hooks/useFleet.js';
import { useLoad } from '../hooks/useLoad.js';
import { useNow } from '../hooks/useNow.js';
import { linkProps } from '../hooks/useRoute.js';
import { useServices } from '../services.js';
import { CustodyOverdue } from './CustodyOverdue.js';
import { RelaysHealth } from './RelaysHealth.js';
import { RelTime } from './RelTime.js';

const dash = '—';

/** Bytes of publications still on their way to `site`, or null while the publications are not known. */
export function bytesPendingDown(
  publications: readonly PublicationListItem[] | null,
  site: string,
): number | null {
  if (!publications) return null;
  return pendingAt(publications, site).reduce((n, r) => n + Math.max(0, r.size - r.bytes), 0);
}

/**
 * The next contact window from the site's plan: `in 3 min · declared` or `in 3 min · predicted (80 %)`,
 * with the windows in its title. From older hubs (no plan), the agents' declared windows.
 */
export function NextWindow({ s, now }: { s: Pick<FleetSite, 'contact' | 'contactWindows'>; now: number }) {
  const plan = s.contact;
  if (plan && plan.source !== 'none') {
    const which =
      plan.source === 'declared'
        ? 'declared'
        : `predicted, ${Math.round((plan.confidence ?? 0) * 100)} % confidence${plan.judged ? '' : ' (too low to judge by)'}`;
    const title = `${plan.source}: ${plan.windows.join('; ')}`;
    const next =
      contactNow(s as FleetSite, now)?.next?.start ??
      (plan.nextWindowAt ? Date.parse(plan.nextWindowAt) : null);
    if (next === null) return <span title={title}>none ahead · {which}</span>;
    const iso = new Date(next).toISOString();
    return (
      <span title={title}>
        <time dateTime={iso} title={formatAbsolute(iso)}>
          {formatAgo(iso, now)}
        </time>{' '}
        · {which}
      </span>
    );
  }
  return <DeclaredWindow windows={s.contactWindows} now={now} />;
}

/** The last window that opened, from the site's plan: `3 min ago, for 40 s`. */
export function LastWindow({ s, now }: { s: Pick<FleetSite, 'contact'>; now: number }) {
  const plan = s.contact;
  const j = plan ? contactNow(s as FleetSite, now) : null;
  const start = j?.last?.start ?? (plan?.lastWindowAt ? Date.parse(plan.lastWindowAt) : null);
  const end = j?.last?.end ?? (plan?.lastWindowEndsAt ? Date.parse(plan.lastWindowEndsAt) : null);
  if (start === null || end === null) return <span class="muted">{dash}</span>;
  const iso = new Date(start).toISOString();
  return (
    <span>
      <time dateTime={iso} title={formatAbsolute(iso)}>
        {formatAgo(iso, now)}
      </time>
      , {end > now ? 'open now' : `for ${formatDuration(end - start)}`}
    </span>
  );
}

/** The agents' declared windows without a plan from the hub: when the next one opens (any window syntax, decision 431), or the text as declared. */
function DeclaredWindow({ windows, now }: { windows: readonly string[]; now: number }) {
  if (windows.length === 0) return <span class="muted">not declared</span>;
  const next = nextWindow(windows, now);
  if (next === null) return <span>as declared: {windows.join('; ')}</span>;
  const iso = new Date(next).toISOString();
  return (
    <time dateTime={iso} title={`${formatAbsolute(iso)} (declared: ${windows.join('; ')})`}>
      {formatAgo(iso, now)}
    </time>
  );
}

/** What went down to the site and its agent has not confirmed (decision 300), or a dash. */
function UnconfirmedDown({
  list,
  publications,
}: {
  list: PlanRequest[] | null;
  publications: PublicationListItem[];
}) {
  const text = unconfirmedText(list ?? [], publications);
  if (!text) return <span class="muted">{dash}</span>;
  return (
    <span class="link-why" title={unconfirmedTitle(list ?? [], publications)}>
      {text}
    </span>
  );
}

/** One site's link facts as table cells, shared by the links view and the site view. */
export function LinkCells({
  s,
  now,
  pendingDown,
  unconfirmed = null,
  unconfirmedPublications = [],
  behind = null,
}: {
  s: FleetSite;
  /** The silent or revoked relay the site's contact came through, if so: then never `in contact`. */
  behind?: BehindRelay | null;
  now: number;
  pendingDown: number | null;
  /** The site's plan requests its agent has not confirmed; null while not known. */
  unconfirmed?: PlanRequest[] | null;
  /** Publications whose delivery to the site the hub marks unconfirmed. */
  unconfirmedPublications?: PublicationListItem[];
}) {
  return (
    <>
      <td
        class={
          behind
            ? 'link-why link-behind'
            : s.link === 'ok'
              ? undefined
              : s.link === 'waiting'
                ? 'link-why link-is-waiting'
                : 'link-why'
        }
      >
        {sentenceBehind(linkSentence(s, now), s.link, behind)}
      </td>
      <td>{s.lastContactAt ? <RelTime iso={s.lastContactAt} now={now} /> : 'never'}</td>
      <td>{expectedContactText(s) ?? dash}</td>
      <td>
        <NextWindow s={s} now={now} />
      </td>
      <td>
        <LastWindow s={s} now={now} />
      </td>
      <td>
        {s.agentsHeardFrom} of {s.agents}
      </td>
      <td>{s.queueDepth ?? dash}</td>
      <td>{s.oldestUnsentAt ? <RelTime iso={s.oldestUnsentAt} now={now} /> : dash}</td>
      <td>{pendingDown === null ? dash : formatBytes(pendingDown)}</td>
      <td>
        <UnconfirmedDown list={unconfirmed} publications={unconfirmedPublications} />
      </td>
      <td>{s.upstream ?? dash}</td>
    </>
  );
}

export const LINK_HEADINGS = [
  'why',
  'last contact',
  'expected contact',
  'next window',
  'last window',
  'agents heard from',
  // The agent's own word and count (`edge-agent status`), as of its last report: decision 580.
  'unacknowledged at last report',
  'oldest unsent result',
  'publications pending down',
  'unconfirmed down',
  'upstream',
];

/** What the hub does not know about links, said once under every link table. */
export function LinkNotes() {
  return (
    <p class="muted small">
      Next windows are the site's contact plan: declared (by its agents or in the hub's config) or predicted
      from its contact history, with the confidence of the prediction; the relay's own contact plan is not
      known to the hub. Between windows a site reads "waiting for window", not "link down". "Unacknowledged at
      last report" is the agents' count of results whose hub acknowledgement had not reached them when they
      last reported, as <code>edge-agent status</code> says "unacknowledged": the results that report came
      with are already here, and the count falls at the agent's next report. Publications pending down are
      files published to the site and not yet placed there. "Unconfirmed down" counts plan requests and
      publications the site's agent has not said arrived within its contact windows: the hub sends them again.
    </p>
  );
}

/** Every site's link: the wall-screen answer to "can we hear them, and what is waiting". */
export function LinksView({ go }: { go: (r: Route) => void }) {
  const { api } = useServices();
  const now = useNow();
  const fleet = useFleet();
  const [publications] = useLoad(() => api.publications(), [api]);
  const [requests] = useLoad(() => api.planRequests(), [api]);
  const [relays] = useLoad(() => api.relays(), [api]);
  const relayList = relays.state === 'ok' ? relays.data.relays : [];
  const open = requests.state === 'ok' ? requests.data.requests : null;
  if (fleet.state === 'loading') return <p aria-busy="true">Loading links…</p>;
  if (fleet.state === 'error')
    return (
      <p class="error" role="alert">
        Could not load the links: {fleet.message}
      </p>
    );
  const b = publications.state === 'ok' ? publications.data.publications : null;
  // A site behind a silent or revoked relay ranks with the overdue ones: the hub cannot hear it.
  const rank = (s: FleetSite) =>
    behindRelay(s, relayList) && (s.link === 'ok' || s.link === 'waiting')
      ? 1
      : ['link-down', 'overdue', 'never-heard', 'no-plan-yet', 'waiting', 'ok'].indexOf(s.link);
  const sites = fleet.data.sites
    .map((s) => liveLink(s, now))
    .sort((x, y) => rank(x) - rank(y) || (x.site < y.site ? -1 : 1));
  return (
    <section aria-labelledby="links-title">
      <h1 id="links-title" class="view-title">
        Links to the sites
      </h1>
      <table class="table links">
        <caption class="sr-only">Each site's link, sites without data first</caption>
        <thead>
          <tr>
            <th scope="col">site</th>
            {LINK_HEADINGS.map((h) => (
              <th scope="col" key={h}>
                {h}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {sites.map((s) => (
            <tr key={s.site} class={`link-${s.link}`}>
              <th scope="row">
                <a {...linkProps({ view: 'site', site: s.site }, go)}>{s.site}</a>
              </th>
              <LinkCells
                s={s}
                now={now}
                pendingDown={bytesPendingDown(b, s.site)}
                unconfirmed={unconfirmedAt(open, s.site, now)}
                unconfirmedPublications={unconfirmedPublicationsAt(b, s.site)}
                behind={behindRelay(s, relayList)}
              />
            </tr>
          ))}
        </tbody>
      </table>
      <LinkNotes />
      <CustodyOverdue g={fleet.data.attentionGroups} />
      <RelaysHealth now={now} relays={relays} />
    </section>
  );
}

/** The site view's "Link" table: one site's facts as the links view shows them. */
export function SiteLink({ detail, now }: { detail: SiteDetail; now: number }) {
  const { api } = useServices();
  const [publications] = useLoad(() => api.publications(detail.site), [api, detail.site]);
  const [requests] = useLoad(() => api.planRequests(detail.site), [api, detail.site]);
  const [relays] = useLoad(() => api.relays(), [api]);
  const s = liveLink(linkFromDetail(detail), now);
  return (
    <>
      <h2>Link</h2>
      <table class="table links">
        <thead>
          <tr>
            {LINK_HEADINGS.map((h) => (
              <th scope="col" key={h}>
                {h}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          <tr class={`link-${s.link}`}>
            <LinkCells
              s={s}
              now={now}
              pendingDown={bytesPendingDown(
                publications.state === 'ok' ? publications.data.publications : null,
                s.site,
              )}
              unconfirmed={unconfirmedAt(
                requests.state === 'ok' ? requests.data.requests : null,
                s.site,
                now,
              )}
              unconfirmedPublications={unconfirmedPublicationsAt(
                publications.state === 'ok' ? publications.data.publications : null,
                s.site,
              )}
              behind={behindRelay(s, relays.state === 'ok' ? relays.data.relays : [])}
            />
          </tr>
        </tbody>
      </table>
      <LinkNotes />
    </>
  );
}
