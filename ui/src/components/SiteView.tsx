import { type AgentInfo, cellKey } from '@driftline/protocol';
import { formatClockOffset } from '../core/clockText.js';
import { expectedContactText } from '../core/expectedContact.js';
import type { Route } from '../core/route.js';
import { useLoad } from '../hooks/useLoad.js';
import { useNow } from '../hooks/useNow.js';
import { linkProps } from '../hooks/useRoute.js';
import { useServices } from '../services.js';
import { CellBody } from './CellBody.js';
import { SiteLink } from './LinksView.js';
import { PendingPublications } from './PendingPublications.js';
import { RelTime } from './RelTime.js';

const dash = '—';

/** One site: contact, clock offset, agents, queue, windows, upstream, and its cells. */
export function SiteView({ site, go }: { site: string; go: (r: Route) => void }) {
  const { api } = useServices();
  const now = useNow();
  const [loaded] = useLoad(() => api.site(site), [api, site]);
  if (loaded.state === 'loading') return <p aria-busy="true">Loading site {site}…</p>;
  if (loaded.state === 'error')
    return (
      <p class="error" role="alert">
        Could not load site {site}: {loaded.message}
      </p>
    );
  const s = loaded.data;
  const cells = [...s.matrix].sort((a, b) =>
    cellKey(a.environment, a.component) < cellKey(b.environment, b.component) ? -1 : 1,
  );
  return (
    <section aria-labelledby="site-title">
      <h1 id="site-title" class="view-title">
        Site {s.site}{' '}
        {s.unreachable ? (
          <span class="mark mark-unreachable">unreachable</span>
        ) : (
          <span class="muted">reachable</span>
        )}
      </h1>
      <dl class="facts">
        <dt>Last contact</dt>
        <dd>{s.lastContactAt ? <RelTime iso={s.lastContactAt} now={now} focusable /> : 'never'}</dd>
        <dt>Expected contact</dt>
        <dd>{expectedContactText(s) ?? dash}</dd>
        <dt>Clock offset</dt>
        <dd>
          {formatClockOffset(s.clockOffsetMs, s.clockOffsetUncertaintyMs)}
          {s.clockHeldAgents?.length ? (
            <span class="mark mark-unreachable"> estimate held back ({s.clockHeldAgents.join(', ')})</span>
          ) : null}
        </dd>
        <dt>Upstream</dt>
        <dd>{s.upstream ?? dash}</dd>
        <dt>Contact windows</dt>
        <dd>{s.contactWindows.length ? s.contactWindows.join('; ') : dash}</dd>
      </dl>
      <SiteLink detail={s} now={now} />
      <h2>Agents</h2>
      <table class="table">
        <thead>
          <tr>
            <th scope="col">agent</th>
            <th scope="col">version</th>
            <th scope="col">last contact</th>
            <th scope="col">unacknowledged at last report</th>
            <th scope="col">oldest unsent</th>
            <th scope="col">clock offset</th>
          </tr>
        </thead>
        <tbody>
          {s.agents.map((a) => (
            <tr key={a.agent}>
              <td>
                {a.agent}
                {a.revokedAt ? <span class="mark"> revoked</span> : null}
              </td>
              <td>{a.version ?? dash}</td>
              <td>{a.lastContactAt ? <RelTime iso={a.lastContactAt} now={now} focusable /> : 'never'}</td>
              <td>{a.queueDepth ?? dash}</td>
              <td>{a.oldestUnsentAt ? <RelTime iso={a.oldestUnsentAt} now={now} focusable /> : dash}</td>
              <td>
                {formatClockOffset(a.clockOffsetMs, a.clockOffsetUncertaintyMs)}
                {a.clockHeld ? <HeldClock held={a.clockHeld} /> : null}
              </td>
            </tr>
          ))}
          {s.agents.flatMap((a) =>
            (a.custodyOverdue ?? []).map((c) => (
              <tr key={`${a.agent} ${c.upstream}`} class="custody-overdue">
                <td colSpan={6}>
                  <span class="mark mark-unreachable">custody past its deadline</span> {a.agent}: {c.upstream}{' '}
                  holds {c.results} result(s) past their deadline, oldest{' '}
                  <RelTime iso={c.oldestAt} now={now} />; sent again by another upstream {c.resends} time(s),
                  passed over since <RelTime iso={c.since} now={now} />
                </td>
              </tr>
            )),
          )}
        </tbody>
      </table>
      <PendingPublications site={s.site} now={now} go={go} />
      <h2>Cells</h2>
      <ul class="cell-list">
        {cells.map((c) => (
          <li key={cellKey(c.environment, c.component)}>
            <a
              {...linkProps(
                {
                  view: 'cell',
                  site: s.site,
                  environment: c.environment,
                  component: c.component,
                  status: null,
                },
                go,
              )}
            >
              {c.environment} / {c.component}
            </a>
            <CellBody cell={c} now={now} unreachableSince={s.unreachable ? s.lastContactAt : null} />
          </li>
        ))}
      </ul>
    </section>
  );
}

/**
 * A clock estimate a hop claimed and the hub did not use (docs/decisions/230-time-a-hop-cannot-forge.md):
 * what was claimed, through which peer, and why it was held back.
 */
function HeldClock({ held }: { held: NonNullable<AgentInfo['clockHeld']> }) {
  const why =
    held.reason === 'jump'
      ? 'it jumps beyond the current estimate'
      : 'it would date results after they arrived or before the previous ones';
  return (
    <span class="mark mark-unreachable" title={`held back since ${held.since}: ${why}`}>
      {' '}
      held back: {formatClockOffset(held.offsetMs, held.uncertaintyMs)} claimed via {held.via}
    </span>
  );
}
