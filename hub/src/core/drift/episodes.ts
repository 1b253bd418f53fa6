import { type EpisodeKind, FAILURE_STATUSES, type PlanSummary } from '@driftline/protocol';
import { checkSignature, driftSignature, failureLine, failureSignature } from './signature.js';

/** One episode as the drift store keeps it. Times are hub milliseconds. */
export interface EpisodeRow {
  /** `kind|site|environment|component|address|firstRunId`: stable, so recording twice changes nothing. */
  id: string;
  kind: EpisodeKind;
  site: string;
  environment: string;
  component: string;
  address: string;
  type: string;
  attributes: string[];
  signature: string;
  state: 'open' | 'resolved';
  firstSeen: number;
  lastSeen: number;
  resolvedAt: number | null;
  firstRunId: string;
  lastRunId: string;
  acknowledgedBy: string | null;
  acknowledgedAt: number | null;
  detail?: string;
}

/** What an episode needs of a run (the hub's `RunRow`). */
export interface ObservedRun {
  runId: string;
  site: string;
  environment: string;
  component: string;
  plannedAt: number;
  summary: PlanSummary;
}

export interface Observation {
  /** Episodes to write (new, extended and resolved). */
  write: EpisodeRow[];
  opened: EpisodeRow[];
  resolved: EpisodeRow[];
}

/** Plans that could not run say nothing of drift or checks: they neither open nor end an episode. */
const SILENT = new Set<string>(['locked', 'blocked']);
const FAILED = new Set<string>(FAILURE_STATUSES);

interface Seen {
  kind: EpisodeKind;
  address: string;
  type: string;
  attributes: string[];
  signature: string;
  detail?: string;
}

/** What a run saw, by `kind|address`; null for a kind the run says nothing about. */
function seenBy(s: PlanSummary): Map<EpisodeKind, Map<string, Seen> | null> {
  const out = new Map<EpisodeKind, Map<string, Seen> | null>();
  if (SILENT.has(s.status))
    return new Map([
      ['drift', null],
      ['check', null],
      ['failure', null],
    ]);
  if (FAILED.has(s.status)) {
    const reason = s.reason ?? s.status;
    const detail = failureLine(s.errorExcerpt);
    const f: Seen = {
      kind: 'failure',
      address: '',
      type: reason,
      attributes: [],
      signature: failureSignature(reason, s.errorExcerpt),
      ...(detail ? { detail } : {}),
    };
    out.set('failure', new Map([['', f]]));
    out.set('drift', null);
    out.set('check', null);
    return out;
  }
  out.set('failure', new Map());
  const drift = new Map<string, Seen>();
  // The document carries drift in brief (`drifted`); a summary with its resources (the detail) says the same.
  const listed =
    s.drifted ??
    (s.resources ?? [])
      .filter((r) => r.drift)
      .map((r) => ({ address: r.address, type: r.type, attributes: r.changedAttributes }));
  for (const r of listed.slice(0, 10_000)) {
    const attributes = [...new Set(r.attributes)].sort().slice(0, 100);
    drift.set(r.address, {
      kind: 'drift',
      address: r.address,
      type: r.type,
      attributes,
      signature: driftSignature(r.type, r.address, attributes),
    });
  }
  // A summary that counts drift but lists no resource (an older or summarised run): one cell-wide episode.
  if (drift.size === 0 && ((s.counts?.drift ?? 0) > 0 || s.status === 'drift'))
    drift.set('', { kind: 'drift', address: '', type: '', attributes: [], signature: 'drift (unlisted)' });
  out.set('drift', drift);
  if (!s.checks) out.set('check', null);
  else {
    const checks = new Map<string, Seen>();
    for (const c of s.checks.items)
      if (c.status === 'fail')
        checks.set(c.address, {
          kind: 'check',
          address: c.address,
          type: c.kind ?? 'check',
          attributes: [],
          signature: checkSignature(c.address),
        });
    out.set('check', checks);
  }
  return out;
}

/**
 * One run of a cell against the cell's open episodes: an address seen again extends its episode, one
 * seen first opens one, an open one not seen is resolved by this run. The caller passes runs in
 * planned order and skips runs older than the cell's last observed one.
 */
export function observeRun(open: readonly EpisodeRow[], run: ObservedRun): Observation {
  const out: Observation = { write: [], opened: [], resolved: [] };
  const seen = seenBy(run.summary);
  const byKey = new Map(open.map((e) => [`${e.kind}|${e.address}`, e]));
  for (const [kind, entries] of seen) {
    if (entries === null) continue;
    for (const [address, s] of entries) {
      const prev = byKey.get(`${kind}|${address}`);
      if (prev) {
        const attributes = [...new Set([...prev.attributes, ...s.attributes])].sort().slice(0, 100);
        out.write.push({ ...prev, lastSeen: run.plannedAt, lastRunId: run.runId, attributes });
        continue;
      }
      const e: EpisodeRow = {
        id: [kind, run.site, run.environment, run.component, address, run.runId].join('|'),
        kind,
        site: run.site,
        environment: run.environment,
        component: run.component,
        address,
        type: s.type,
        attributes: s.attributes,
        signature: s.signature,
        state: 'open',
        firstSeen: run.plannedAt,
        lastSeen: run.plannedAt,
        resolvedAt: null,
        firstRunId: run.runId,
        lastRunId: run.runId,
        acknowledgedBy: null,
        acknowledgedAt: null,
        ...(s.detail ? { detail: s.detail } : {}),
      };
      out.write.push(e);
      out.opened.push(e);
    }
    for (const e of open) {
      if (e.kind !== kind || entries.has(e.address)) continue;
      const r: EpisodeRow = { ...e, state: 'resolved', resolvedAt: run.plannedAt };
      out.write.push(r);
      out.resolved.push(r);
    }
  }
  return out;
}
