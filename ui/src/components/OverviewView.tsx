import {
  ATTENTION_KINDS,
  type AttentionItem,
  type AttentionKind,
  type CellStatus,
  type FleetResponse,
  type SilentSite,
  silentSite,
} from '@driftline/protocol';
import { behindText } from '../core/behind.js';
import { nextInText } from '../core/contact.js';
import { liveLink } from '../core/link.js';
import { countOf } from '../core/plural.js';
import { type Filters, NO_FILTERS, type Route } from '../core/route.js';
import { statusLook, statusText } from '../core/status.js';
import { formatAbsolute, formatAgo } from '../core/time.js';
import { useFleet } from '../hooks/useFleet.js';
import { useLoad } from '../hooks/useLoad.js';
import { useNow } from '../hooks/useNow.js';
import { linkProps } from '../hooks/useRoute.js';
import { useServices } from '../services.js';
import { AttentionGroupList, attentionSummary } from './AttentionGroups.js';
import { EnvironmentTable } from './FleetTables.js';
import { OverviewDrift } from './OverviewDrift.js';
import { SitesPaged } from './SitesPaged.js';

type Go = (r: Route) => void;

/** The order statuses are counted in: the ones that need a person first. */
export const STATUS_ORDER: readonly CellStatus[] = [
  'failed',
  'redaction-failed',
  'blocked',
  'drift',
  'changes',
  'locked',
  'clean',
  'no-data',
];

export const matrixRoute = (f: Partial<Filters>): Route => ({
  view: 'matrix',
  filters: { ...NO_FILTERS, ...f },
  pivot: null,
});

const KIND_TEXT: Record<
  AttentionKind,
  { icon: string; label: string; tone: string; filter: Partial<Filters> }
> = {
  failed: { icon: '✕', label: 'failed', tone: 'st-failed', filter: { status: 'failed' } },
  'stuck-lock': { icon: '⊘', label: 'stuck lock (failed)', tone: 'st-locked', filter: { status: 'failed' } },
  drift: { icon: '≈', label: 'drift', tone: 'st-drift', filter: { status: 'drift' } },
  'check-failed': { icon: '✓✕', label: 'failing check', tone: 'st-failed', filter: {} },
  stale: { icon: '◔', label: 'stale', tone: 'st-changes', filter: { staleOnly: true } },
  blocked: { icon: '⊟', label: 'blocked', tone: 'st-blocked', filter: { status: 'blocked' } },
};

/** The landing view: what a wall screen at headquarters shows — totals, the worst cells, sites, environments. */
export function OverviewView({ go }: { go: Go }) {
  const now = useNow();
  const fleet = useFleet();
  const { api } = useServices();
  // Asked with the fleet, so both answers come together (decision 421).
  const [drift] = useLoad(() => api.driftGroups(), [api]);
  if (fleet.state === 'loading') return <p aria-busy="true">Loading the fleet overview…</p>;
  if (fleet.state === 'error')
    return (
      <p class="error" role="alert">
        Could not load the fleet overview: {fleet.message}
      </p>
    );
  const f = fleet.data;
  // Current as of the hub's latest heartbeat when nothing was left to read (docs/decisions/585-live-is-live.md).
  const asOf = fleet.judgedAt && fleet.judgedAt > f.asOf ? fleet.judgedAt : f.asOf;
  return (
    <section class="overview" aria-labelledby="overview-title">
      <h1 id="overview-title" class="view-title">
        Fleet overview{' '}
        <span class="muted small">
          {countOf(f.totals.cells, 'cell')} at {countOf(f.totals.sites, 'site')} · as of{' '}
          <time dateTime={asOf} title={formatAbsolute(asOf)}>
            {formatAgo(asOf, now)}
          </time>
        </span>
      </h1>
      {fleet.behind ? (
        <p class="behind banner" role="status" aria-label="Live updates behind">
          {behindText(fleet.behind, now)}
        </p>
      ) : null}
      <Totals f={f} go={go} />
      <Attention f={f} now={now} go={go} />
      {drift.state === 'ok' ? <OverviewDrift data={drift.data} go={go} /> : null}
      <div class="ov-tables">
        <SitesPaged known={f.sites} version={f.asOf} now={now} go={go} />
        <EnvironmentTable environments={f.environments} go={go} />
      </div>
    </section>
  );
}

function Totals({ f, go }: { f: FleetResponse; go: Go }) {
  const t = f.totals;
  return (
    <ul class="ov-totals" aria-label="Cells by status">
      {STATUS_ORDER.filter((s) => (t.statusCounts[s] ?? 0) > 0 || s === 'failed').map((s) => {
        const look = statusLook(s);
        return (
          <li key={s} class={`ov-total ${look.tone}`}>
            <a {...linkProps(matrixRoute({ status: s }), go)}>
              <span class="ov-icon" aria-hidden="true">
                {look.icon}
              </span>
              <span class="ov-n">{(t.statusCounts[s] ?? 0).toLocaleString('en')}</span>{' '}
              <span class="ov-label">{look.label}</span>
            </a>
          </li>
        );
      })}
      <li class="ov-total st-changes">
        <a {...linkProps(matrixRoute({ staleOnly: true }), go)}>
          <span class="ov-icon" aria-hidden="true">
            ◔
          </span>
          <span class="ov-n">{t.stale.toLocaleString('en')}</span> <span class="ov-label">stale</span>
        </a>
      </li>
      <li class={`ov-total ${t.unreachableSites > 0 ? 'st-failed' : 'st-nodata'}`}>
        <a {...linkProps({ view: 'links' }, go)}>
          <span class="ov-icon" aria-hidden="true">
            ⌁
          </span>
          <span class="ov-n">
            {t.unreachableSites} of {t.sites}
          </span>{' '}
          <span class="ov-label">sites unreachable</span>
        </a>
      </li>
      {relayProblems(f) > 0 ? (
        <li class="ov-total st-failed">
          <a {...linkProps({ view: 'links' }, go)}>
            <span class="ov-icon" aria-hidden="true">
              ⌁
            </span>
            <span class="ov-n">{relayProblems(f).toLocaleString('en')}</span>{' '}
            <span class="ov-label">relay problems</span>
          </a>
        </li>
      ) : null}
    </ul>
  );
}

/**
 * Silent relays, sites refused at a relay and upstreams sitting on custody: the headline's relay count
 * (issue 44; issue 59, docs/decisions/575-custody-deadline-per-path.md).
 */
function relayProblems(f: FleetResponse): number {
  const c = f.attentionGroups?.counts;
  return c ? c.silentRelays + c.refusedSites + (c.custodyUpstreams ?? 0) : 0;
}

function Attention({ f, now, go }: { f: FleetResponse; now: number; go: Go }) {
  if (f.attentionGroups) return <GroupedAttention f={f} now={now} go={go} />;
  const shown = new Map<AttentionKind, number>();
  for (const a of f.attention) shown.set(a.kind, (shown.get(a.kind) ?? 0) + 1);
  const total = ATTENTION_KINDS.reduce((n, k) => n + f.attentionCounts[k], 0);
  // Judged again at `now`: a site waiting for its window turns overdue without a new answer from the hub.
  const silent = f.sites
    .map((s) => silentSite(liveLink(s, now)))
    .filter((s): s is SilentSite => s !== null)
    .sort(
      (a, b) => SILENT_ORDER.indexOf(a.state) - SILENT_ORDER.indexOf(b.state) || (a.site < b.site ? -1 : 1),
    );
  return (
    <section aria-labelledby="attention-title" class="ov-attention">
      <h2 id="attention-title">
        Needs attention <span class="muted small">({total.toLocaleString('en')}, worst first)</span>
      </h2>
      {silent.length > 0 ? (
        <ol class="attention silent-sites" aria-label="Silent sites">
          {silent.map((s) => (
            <SilentSiteRow key={s.site} s={s} now={now} go={go} />
          ))}
        </ol>
      ) : null}
      {total === 0 ? (
        <p>Nothing failed, stuck, drifted, stale or blocked.</p>
      ) : (
        <ol class="attention">
          {f.attention.slice(0, 30).map((a) => (
            <AttentionRow
              key={`${a.kind}/${a.site}/${a.environment}/${a.component}`}
              a={a}
              now={now}
              go={go}
            />
          ))}
        </ol>
      )}
      <p class="ov-more">
        {ATTENTION_KINDS.filter((k) => f.attentionCounts[k] > 0).map((k) => (
          <a key={k} {...linkProps(matrixRoute(KIND_TEXT[k].filter), go)} class={KIND_TEXT[k].tone}>
            <span aria-hidden="true">{KIND_TEXT[k].icon}</span> {KIND_TEXT[k].label} in the matrix
          </a>
        ))}
      </p>
    </section>
  );
}

/**
 * A hub that groups (issue 44): one row per cause; sites merely waiting for their window are listed
 * apart (overdue and unreachable ones are rows of the groups).
 */
function GroupedAttention({ f, now, go }: { f: FleetResponse; now: number; go: Go }) {
  const g = f.attentionGroups!;
  const waiting = f.sites
    .map((s) => silentSite(liveLink(s, now)))
    .filter((s): s is SilentSite => s !== null && s.state === 'waiting')
    .sort((a, b) => (a.site < b.site ? -1 : 1));
  return (
    <section aria-labelledby="attention-title" class="ov-attention">
      <h2 id="attention-title">
        Needs attention <span class="muted small">({attentionSummary(g)})</span>
      </h2>
      <AttentionGroupList g={g} go={go} />
      {waiting.length > 0 ? (
        <ol class="attention silent-sites" aria-label="Silent sites">
          {waiting.map((s) => (
            <SilentSiteRow key={s.site} s={s} now={now} go={go} />
          ))}
        </ol>
      ) : null}
    </section>
  );
}

const SILENT_ORDER: readonly SilentSite['state'][] = ['unreachable', 'overdue', 'waiting'];

const cellsText = (n: number) => countOf(n, 'cell');

/** A silent site's one attention row: `polar-1: 19 cells, waiting for window in 3 min`. */
export function silentSiteText(s: SilentSite, now: number): string {
  const next = nextInText(s.nextWindowAt, now);
  switch (s.state) {
    case 'waiting':
      return `${s.site}: ${cellsText(s.cells)}, waiting for window ${next.replace(/^next /, '')}`;
    case 'overdue':
      return `${s.site}: ${cellsText(s.cells)}, overdue: ${s.missedWindows} ${s.missedWindows === 1 ? 'window' : 'windows'} passed without contact, ${next}`;
    case 'unreachable':
      return `${s.site}: ${cellsText(s.cells)}, unreachable${s.lastContactAt ? `, last heard ${formatAgo(s.lastContactAt, now)}` : ''}`;
  }
}

function SilentSiteRow({ s, now, go }: { s: SilentSite; now: number; go: Go }) {
  const tone = s.state === 'waiting' ? 'st-nodata' : 'st-failed';
  const icon = s.state === 'waiting' ? '◌' : s.state === 'overdue' ? '!' : '⌁';
  return (
    <li class={`att att-silent att-${s.state}`}>
      <span class={`att-kind ${tone}`}>
        <span aria-hidden="true">{icon}</span> {s.state === 'waiting' ? 'silent' : s.state}
      </span>{' '}
      <a {...linkProps({ view: 'site', site: s.site }, go)}>{silentSiteText(s, now)}</a>
    </li>
  );
}

function AttentionRow({ a, now, go }: { a: AttentionItem; now: number; go: Go }) {
  const k = KIND_TEXT[a.kind];
  const status = a.status as CellStatus;
  return (
    <li class={`att att-${a.kind}`}>
      <span class={`att-kind ${k.tone}`}>
        <span aria-hidden="true">{k.icon}</span> {k.label}
      </span>{' '}
      <a
        {...linkProps(
          {
            view: 'cell',
            site: a.site,
            environment: a.environment,
            component: a.component,
            status: null,
            ...(a.ref && a.ref !== 'main' ? { ref: a.ref } : {}),
          },
          go,
        )}
      >
        {a.site} · {a.environment} / {a.component}
      </a>{' '}
      <span class="att-what">
        {statusText(status, null, a.reason)}
        {a.needs.length ? ` · needs ${a.needs.join('; ')}` : ''}
        {a.siteUnreachable ? ' · site unreachable' : ''}
      </span>{' '}
      {a.plannedAt ? (
        <time class="att-age muted" dateTime={a.plannedAt} title={formatAbsolute(a.plannedAt)}>
          planned {formatAgo(a.plannedAt, now)}
        </time>
      ) : null}
    </li>
  );
}
