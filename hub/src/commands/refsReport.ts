import type { MatrixCell, PlanCounts, RefStatusResponse } from '@driftline/protocol';
import { MAX_GATE_CELLS } from '../core/RefQueries.js';

/** Groups of a PR comment, in the order they are shown. */
export const REPORT_GROUPS = ['failed', 'blocked', 'changes', 'drift', 'pending', 'clean'] as const;
export type ReportGroup = (typeof REPORT_GROUPS)[number];

/** One cell of a report: where, what the plan said, how old it is, and its dashboard link. */
export interface ReportCell {
  site: string;
  environment: string;
  component: string;
  status: string;
  commit: string | null;
  counts: PlanCounts | null;
  reason: string | null;
  needs: string[];
  /** Publications on their way that answer `needs` (a blocked plan held as pending). */
  onTheWay?: string[];
  plannedAt: string | null;
  link: string;
}

export interface RefReport {
  ref: string;
  commit: string | null;
  asOf: string;
  /** The gate when a commit was named. */
  gate: Pick<RefStatusResponse, 'state' | 'counts'> | null;
  groups: Record<ReportGroup, ReportCell[]>;
  /**
   * Cells the gate counts that the report has no row of, by the gate's counts, when the gate did not list
   * every cell (a ref past `MAX_GATE_CELLS`, decision 615); null when every counted cell has a row.
   */
  unlisted: { complete: number; notComplete: number } | null;
  /** The ref's matrix had more cells than the report read (`MAX_REPORT_CELLS`, decision 640); else null. */
  cut: { cells: number; next: string } | null;
}

/** The dashboard's URL of a cell in the ref's view (the UI keeps its view in the query string). */
export function cellLink(
  hub: string,
  ref: string,
  c: { site: string; environment: string; component: string },
) {
  const p = new URLSearchParams({ view: 'cell', site: c.site, env: c.environment, comp: c.component, ref });
  return `${hub}/?${p.toString()}`;
}

function groupOf(status: string): ReportGroup {
  if (status === 'clean' || status === 'changes' || status === 'drift' || status === 'blocked') return status;
  if (status === 'no-data' || status === 'locked') return 'pending';
  return 'failed';
}

/** Groups whose cells are complete at the gate (their plan of the commit is clean, changes or drift). */
const COMPLETE_GROUPS: readonly ReportGroup[] = ['changes', 'drift', 'clean'];

/**
 * A report of a ref's plans from its matrix and, with a commit, its gate: cells of other commits and
 * the gate's pending cells count as pending, so the report shows what the commit's plans said.
 *
 * Past `MAX_GATE_CELLS` the gate lists only cells not complete (decision 615): a cell it does not list
 * is reported from the matrix when the matrix's plan is of the commit, else it has no row and is counted
 * in `unlisted` from the gate's counts (which cover every cell), never reported as no-data.
 */
export function buildReport(
  hub: string,
  ref: string,
  commit: string | null,
  matrix: { cells: MatrixCell[]; asOf?: string; cut?: RefReport['cut'] },
  gate: RefStatusResponse | null,
): RefReport {
  const groups = Object.fromEntries(REPORT_GROUPS.map((g) => [g, [] as ReportCell[]])) as RefReport['groups'];
  const byCell = new Map(gate?.cells.map((c) => [`${c.site}/${c.environment}/${c.component}`, c]) ?? []);
  // The gate listed only some cells: the rest are not known to be pending.
  const partial = !!gate && gate.cells.length < gate.counts.total;
  const seen = new Set<string>();
  for (const m of matrix.cells) {
    const id = `${m.site}/${m.environment}/${m.component}`;
    seen.add(id);
    const g = byCell.get(id);
    if (commit && !g && m.commit === commit && m.status !== 'no-data') {
      // The cell's latest plan is of the commit: it is the plan the gate judged.
      groups[groupOf(m.status)].push({
        site: m.site,
        environment: m.environment,
        component: m.component,
        status: m.status,
        commit,
        counts: m.counts,
        reason: m.reason ?? null,
        needs: m.needs ?? [],
        plannedAt: m.plannedAt,
        link: cellLink(hub, ref, m),
      });
      continue;
    }
    // A plan of the commit the cell moved on from, not listed: the gate's counts tell of it.
    if (commit && !g && partial) continue;
    const coming = commit && g?.onTheWay?.length ? g : null;
    const of = commit && g ? (g.state === 'pending' ? null : g) : null;
    const status = commit ? (of?.planStatus ?? 'no-data') : m.status;
    groups[groupOf(status)].push({
      site: m.site,
      environment: m.environment,
      component: m.component,
      status,
      commit: of ? commit : (m.commit ?? null),
      counts: of ? of.counts : commit ? null : m.counts,
      reason: of ? of.reason : commit ? null : (m.reason ?? null),
      needs: coming ? coming.needs : of ? of.needs : commit ? [] : (m.needs ?? []),
      ...(coming ? { onTheWay: coming.onTheWay } : {}),
      plannedAt: of ? of.plannedAt : commit ? null : m.plannedAt,
      link: cellLink(hub, ref, m),
    });
  }
  // Gate cells the matrix did not list (a plan of the commit the cell has since moved on from).
  for (const g of gate?.cells ?? []) {
    const id = `${g.site}/${g.environment}/${g.component}`;
    if (seen.has(id)) continue;
    const status = g.state === 'pending' ? 'no-data' : (g.planStatus ?? 'no-data');
    groups[groupOf(status)].push({
      site: g.site,
      environment: g.environment,
      component: g.component,
      status,
      commit: g.commit,
      counts: g.counts,
      reason: g.reason,
      needs: g.needs,
      ...(g.onTheWay?.length ? { onTheWay: g.onTheWay } : {}),
      plannedAt: g.plannedAt,
      link: cellLink(hub, ref, g),
    });
  }
  let unlisted: RefReport['unlisted'] = null;
  if (gate && partial) {
    const shown = (gs: readonly ReportGroup[]) => gs.reduce((n, g) => n + groups[g].length, 0);
    const complete = shown(COMPLETE_GROUPS);
    const notComplete = shown(REPORT_GROUPS.filter((g) => !COMPLETE_GROUPS.includes(g)));
    const c = gate.counts;
    unlisted = {
      complete: Math.max(0, c.complete - complete),
      notComplete: Math.max(0, c.total - c.complete - notComplete),
    };
  }
  return {
    ref,
    commit,
    asOf: matrix.asOf ?? new Date().toISOString(),
    gate: gate ? { state: gate.state, counts: gate.counts } : null,
    groups,
    unlisted,
    cut: matrix.cut ?? null,
  };
}

/** "5 min ago", "3 h ago", "2 d ago" from `at` to `now`. */
export function age(at: string | null, now: string): string {
  if (!at) return '—';
  const s = Math.max(0, (Date.parse(now) - Date.parse(at)) / 1000);
  if (s < 90) return `${Math.round(s)} s ago`;
  if (s < 90 * 60) return `${Math.round(s / 60)} min ago`;
  if (s < 36 * 3600) return `${Math.round(s / 3600)} h ago`;
  return `${Math.round(s / 86_400)} d ago`;
}

const TITLES: Record<ReportGroup, string> = {
  failed: 'Failed',
  blocked: 'Blocked: the site lacks something headquarters can send',
  changes: 'Changes',
  drift: 'Drift: changed outside Terraform, not by this ref (kept apart from its changes)',
  pending: 'Pending: no plan of this commit yet',
  clean: 'No changes',
};

const md = (s: string) => s.replace(/[|\\`*_[\]<>]/g, (c) => `\\${c}`);

function row(c: ReportCell, g: ReportGroup, now: string): string {
  const where = `[${md(c.site)} · ${md(c.environment)}/${md(c.component)}](${c.link})`;
  const n = c.counts;
  const detail =
    g === 'changes'
      ? n
        ? `+${n.add} ~${n.change} −${n.destroy}${n.replace ? ` ±${n.replace}` : ''}${n.import ? ` ⇢${n.import}` : ''}`
        : ''
      : g === 'drift'
        ? `${n?.drift ?? 0} drifted`
        : g === 'blocked'
          ? c.needs.map((x) => `needs \`${x.replace(/`/g, '')}\``).join('<br>')
          : g === 'failed'
            ? md(c.reason ?? c.status)
            : g === 'pending'
              ? c.onTheWay?.length
                ? `blocked until ${c.needs.map((x) => `\`${x.replace(/`/g, '')}\``).join(', ')} arrives: publication ${c.onTheWay.map(md).join(', ')} is on its way`
                : c.commit
                  ? `latest plan is of ${c.commit.slice(0, 12)}`
                  : 'not planned yet'
              : '';
  return `| ${where} | ${detail} | ${age(c.plannedAt, now)} |`;
}

/** The report as a PR comment (GitHub/GitLab Markdown). */
export function reportMarkdown(r: RefReport): string {
  const lines: string[] = [];
  const at = r.commit ? ` at \`${r.commit.slice(0, 12)}\`` : '';
  lines.push(`### Driftline plans of \`${r.ref.replace(/`/g, '')}\`${at}`);
  if (r.gate) {
    const c = r.gate.counts;
    lines.push(
      '',
      `**Gate: ${r.gate.state}** — ${c.complete} complete, ${c.pending} pending, ${c.blocked} blocked, ${c.failed} failed of ${c.total} cell(s)`,
    );
  }
  const u = r.unlisted;
  if (u && u.complete + u.notComplete > 0)
    lines.push(
      '',
      `${u.complete + u.notComplete} more cell(s) not listed: ${u.complete} complete, ${u.notComplete} not complete (past ${MAX_GATE_CELLS.toLocaleString('en')} cells the gate lists only the cells not complete, the first ${MAX_GATE_CELLS.toLocaleString('en')}).`,
    );
  if (r.cut)
    lines.push(
      '',
      `**Cut:** the ref's matrix has more than ${r.cut.cells.toLocaleString('en')} cells; this report lists the first ${r.cut.cells.toLocaleString('en')} (by site and cell). Read the rest a site at a time from the hub's API: \`/api/matrix?ref=${encodeURIComponent(r.ref)}&site=<site>\`.`,
    );
  const total = REPORT_GROUPS.reduce((n, g) => n + r.groups[g].length, 0);
  if (total === 0) lines.push('', 'No site has planned this ref yet.');
  for (const g of REPORT_GROUPS) {
    const cells = r.groups[g];
    if (cells.length === 0) continue;
    lines.push('', `#### ${TITLES[g]} (${cells.length})`, '', '| Cell | | Planned |', '|---|---|---|');
    for (const c of cells) lines.push(row(c, g, r.asOf));
  }
  return `${lines.join('\n')}\n`;
}
