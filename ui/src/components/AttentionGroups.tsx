import {
  type AttentionFilter,
  type AttentionGroup,
  type AttentionGroups,
  CellStatusSchema,
} from '@driftline/protocol';
import { countOf } from '../core/plural.js';
import { type Filters, NO_FILTERS, type Route } from '../core/route.js';
import { linkProps } from '../hooks/useRoute.js';

type Go = (r: Route) => void;

const matrixRoute = (f: Partial<Filters>): Route => ({
  view: 'matrix',
  filters: { ...NO_FILTERS, ...f },
  pivot: null,
});

/**
 * Where a grouped row leads: Links for a relay, the matrix filtered to a site, or to the status (a stale
 * group to stale cells). The matrix has no reason filter: a reason's cells are found by their status.
 */
export function attentionRoute(f: AttentionFilter): Route {
  if (f.view === 'links') return { view: 'links' };
  if ('site' in f) return matrixRoute({ site: f.site });
  if (f.status === 'stale') return matrixRoute({ staleOnly: true });
  const status = CellStatusSchema.safeParse(f.status);
  const filters: Partial<Filters> = status.success ? { status: status.data } : {};
  return matrixRoute(filters);
}

const LOOK: Record<AttentionGroup['kind'], { icon: string; label: string; tone: string }> = {
  'silent-relay': { icon: '⌁', label: 'relay silent', tone: 'st-failed' },
  'refused-site': { icon: '⊘', label: 'refused', tone: 'st-failed' },
  'custody-overdue': { icon: '◷', label: 'custody overdue', tone: 'st-failed' },
  'overdue-site': { icon: '!', label: 'overdue', tone: 'st-failed' },
  cells: { icon: '▦', label: 'cells', tone: 'st-changes' },
};

const CELL_TONE: Record<string, string> = {
  failed: 'st-failed',
  'redaction-failed': 'st-failed',
  drift: 'st-drift',
  blocked: 'st-blocked',
  stale: 'st-changes',
};

/** What the grouped list's heading counts: causes and cells, relay problems included. */
export function attentionSummary(g: AttentionGroups): string {
  const c = g.counts;
  const parts = [
    c.silentRelays ? countOf(c.silentRelays, 'silent relay') : '',
    c.refusedSites ? countOf(c.refusedSites, 'refused site') : '',
    c.custodyUpstreams
      ? countOf(c.custodyUpstreams, 'upstream sitting on results', 'upstreams sitting on results')
      : '',
    c.overdueSites ? countOf(c.overdueSites, 'overdue site') : '',
    c.cells ? countOf(c.cells, 'cell') : '',
  ].filter(Boolean);
  return parts.length ? parts.join(', ') : 'nothing';
}

/**
 * "Needs attention" grouped by cause (issue 44): one row per silent relay, refused site, upstream sitting
 * on custody (issue 59), overdue site, cell group.
 */
export function AttentionGroupList({ g, go }: { g: AttentionGroups; go: Go }) {
  if (g.rows.length === 0)
    return <p>Nothing failed, stuck, drifted, stale or blocked; every relay reports.</p>;
  return (
    <>
      <ol class="attention att-groups" aria-label="Needs attention by cause">
        {g.rows.map((r) => {
          const look = LOOK[r.kind];
          const tone = r.kind === 'cells' ? (CELL_TONE[r.status] ?? look.tone) : look.tone;
          const label = r.kind === 'overdue-site' ? r.state : r.kind === 'cells' ? r.status : look.label;
          return (
            <li key={`${r.kind}/${r.text}`} class={`att att-group att-${r.kind}`}>
              <span class={`att-kind ${tone}`}>
                <span aria-hidden="true">{look.icon}</span> {label}
              </span>{' '}
              <a {...linkProps(attentionRoute(r.filter), go)}>{r.text}</a>
            </li>
          );
        })}
      </ol>
      {g.more > 0 ? <p class="muted small">{countOf(g.more, 'more row')} not shown</p> : null}
    </>
  );
}
