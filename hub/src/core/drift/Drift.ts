import type {
  DriftEpisode,
  DriftGroup,
  DriftGroupsQuery,
  DriftGroupsResponse,
  DriftQuery,
  DriftResponse,
  Waiver,
  WaiverCreate,
} from '@driftline/protocol';
import { type CellMark, cellKey, type DriftStore, type EpisodeFilter } from '../../ports/DriftStore.js';
import type { AuditRow, CellRow, RunRow, WebhookRow } from '../../ports/HubStore.js';
import { waivedKey } from '../fleet/waivedDrift.js';
import { type EpisodeRow, type Observation, observeRun } from './episodes.js';
import { episodeNotices, type Notice } from './notices.js';
import { covers, isActive, type WaiverRow, waiverOf } from './waivers.js';

const iso = (ms: number) => new Date(ms).toISOString();

export interface DriftDeps {
  drift: DriftStore;
  /** Writes webhooks and audit rows (the hub store's `commit`). */
  commit(w: { webhooks?: WebhookRow[]; audit?: Omit<AuditRow, 'id'>[] }): Promise<void>;
  clock: { now(): number };
  ids: { next(): string };
  webhookUrls: readonly string[];
}

/** Who changed a waiver, for the audit log. */
export interface Actor {
  actor: string;
  via: string;
  address: string;
}

/**
 * Drift as objects (decision 421): advances episodes from the runs each committed batch brings, answers
 * `/api/drift` and its groups, keeps waivers (audited) and says which cells' drift is all waived.
 */
export class Drift {
  private chain: Promise<unknown> = Promise.resolve();
  private cache: {
    at: number;
    until: number;
    stamp: string;
    open: EpisodeRow[];
    waivers: WaiverRow[];
    /** `waivedCells`' answer, made at the first read of this cache (it cannot change while the cache holds). */
    waivedCells?: ReadonlySet<string>;
  } | null = null;

  constructor(private readonly d: DriftDeps) {}

  /**
   * Feeds a committed batch's runs in planned order, and its cells: a cell whose plan was confirmed
   * unchanged (no new run) moves its open episodes' last seen. One batch at a time, at this hub and
   * among the hubs sharing the store (`DriftStore.exclusive`), so episodes never race.
   */
  observe(runs: readonly RunRow[], cells: readonly CellRow[] = []): Promise<void> {
    // A batch of `@ref` plans only, or of cells its own runs cover, has nothing to observe: no lock taken.
    const ran = new Set(runs.map((r) => r.runId));
    if (runs.every((r) => r.atRef) && cells.every((c) => c.atRef || ran.has(c.runId)))
      return this.chain.then(() => undefined);
    // Other hubs on the same database advance the same episodes: one batch at a time among them too.
    const next = this.chain.then(() => this.d.drift.exclusive(() => this.observeBatch(runs, cells)));
    this.chain = next.catch(() => undefined);
    return next;
  }

  /** Resolves when every batch handed to `observe` so far is recorded. */
  settled(): Promise<unknown> {
    return this.chain;
  }

  /**
   * One batch: its cells read once, its runs observed in planned order, its confirmed cells' episodes
   * moved, one transaction. Per run it cost three round trips per result on PostgreSQL, so observation
   * fell minutes behind ingest with every waiting batch in memory (fleetScale, 1,000 × 200).
   */
  private async observeBatch(runs: readonly RunRow[], cells: readonly CellRow[]): Promise<void> {
    const sorted = runs.filter((r) => !r.atRef).sort((a, b) => a.plannedAt - b.plannedAt);
    const ran = new Set(runs.map((r) => r.runId));
    const confirmed = cells.filter((c) => !c.atRef && !ran.has(c.runId));
    const state = await this.d.drift.cellsState([...sorted, ...confirmed]);
    const episodes: EpisodeRow[] = [];
    const marks: CellMark[] = [];
    // `state` kept as the store will be once what is written so far is recorded.
    const write = (k: string, open: readonly EpisodeRow[], rows: readonly EpisodeRow[], mark: CellMark) => {
      const byId = new Map(rows.map((e) => [e.id, e]));
      const kept = open.map((e) => byId.get(e.id) ?? e);
      const known = new Set(open.map((e) => e.id));
      const next = [...kept, ...rows.filter((e) => !known.has(e.id))].filter((e) => e.state === 'open');
      state.open.set(k, next);
      state.marks.set(k, Math.max(state.marks.get(k) ?? mark.plannedAt, mark.plannedAt));
      episodes.push(...rows);
      marks.push(mark);
    };
    const seen: Observation[] = [];
    const now = this.d.clock.now();
    for (const r of sorted) {
      const k = cellKey(r);
      const mark = state.marks.get(k);
      // A run older than one already observed (late, by another relay) does not move episodes back.
      if (mark !== undefined && r.plannedAt < mark) continue;
      const open = state.open.get(k) ?? [];
      const o = observeRun(open, r);
      const { site, environment, component, plannedAt } = r;
      write(k, open, o.write, { site, environment, component, plannedAt });
      seen.push(o);
    }
    // A cell whose plan was confirmed unchanged (no new run): its open episodes' last seen moves.
    for (const c of confirmed) {
      const k = cellKey(c);
      const open = state.open.get(k) ?? [];
      const moved = open.filter((e) => e.lastRunId === c.runId && e.lastSeen < c.plannedAt);
      if (moved.length === 0) continue;
      const { site, environment, component, plannedAt } = c;
      write(
        k,
        open,
        moved.map((e) => ({ ...e, lastSeen: plannedAt })),
        { site, environment, component, plannedAt },
      );
    }
    if (marks.length > 0) await this.d.drift.record({ episodes, marks });
    this.cache = null;
    // Waivers are read only when a drift episode opened (whether it opened waived); most batches open none.
    const opened = seen.some((o) => o.opened.some((e) => e.kind === 'drift'));
    const waivers = opened ? await this.d.drift.listWaivers() : [];
    const notices = seen.flatMap((o) => episodeNotices(o, (e) => waiverOf(waivers, e, now) !== null));
    const webhooks = notices.flatMap((n) => this.webhooks(n, now));
    if (webhooks.length > 0) await this.d.commit({ webhooks });
  }

  /** One row per URL; the id names the episode, so it notifies once however often it is recorded. */
  webhooks(n: Notice, now: number): WebhookRow[] {
    const body = JSON.stringify({ event: n.event, subject: n.subject, at: iso(now), ...n.body });
    return this.d.webhookUrls.map((url) => ({
      id: `${n.event}|${n.key}|${url}`,
      url,
      event: n.event,
      body,
      attempts: 0,
      nextAt: now,
      state: 'pending',
      lastError: null,
    }));
  }

  /**
   * Open episodes and waivers, read once until something changes or the next waiver ends. The store's
   * stamp is read first: a write by another hub or by `hub waiver` (decision 470) makes it read again.
   */
  private async current(now: number) {
    const stamp = await this.d.drift.stamp();
    const c = this.cache;
    if (c && c.stamp === stamp && now >= c.at && now < c.until) return c;
    const [open, waivers] = await Promise.all([this.d.drift.listOpen(), this.d.drift.listWaivers()]);
    let until = Number.POSITIVE_INFINITY;
    for (const w of waivers) {
      if (w.removedAt !== null) continue;
      if (w.createdAt > now) until = Math.min(until, w.createdAt);
      else if (w.expiresAt > now) until = Math.min(until, w.expiresAt);
    }
    this.cache = { at: now, until, stamp, open, waivers };
    return this.cache;
  }

  private view(e: EpisodeRow, waivers: readonly WaiverRow[], now: number): DriftEpisode {
    const w = e.state === 'open' ? waiverOf(waivers, e, now) : null;
    const end = e.resolvedAt ?? now;
    return {
      id: e.id,
      kind: e.kind,
      site: e.site,
      environment: e.environment,
      component: e.component,
      address: e.address,
      type: e.type,
      attributes: e.attributes,
      signature: e.signature,
      state: w ? 'waived' : e.state,
      firstSeen: iso(e.firstSeen),
      lastSeen: iso(e.lastSeen),
      resolvedAt: e.resolvedAt === null ? null : iso(e.resolvedAt),
      durationS: Math.max(0, Math.round((end - e.firstSeen) / 1000)),
      firstRunId: e.firstRunId,
      lastRunId: e.lastRunId,
      acknowledgedBy: e.acknowledgedBy,
      acknowledgedAt: e.acknowledgedAt === null ? null : iso(e.acknowledgedAt),
      waiver: w?.id ?? null,
      ...(e.detail ? { detail: e.detail } : {}),
    };
  }

  /** `/api/drift`: episodes newest first, filtered, a bounded page and a cursor. */
  async list(q: DriftQuery): Promise<DriftResponse> {
    const now = this.d.clock.now();
    const { waivers } = await this.current(now);
    const { limit, cursor, state, ...rest } = q;
    const f: EpisodeFilter = {
      ...rest,
      ...(state ? { state: state === 'resolved' ? 'resolved' : 'open' } : {}),
    };
    const out: DriftEpisode[] = [];
    let before = cursor !== undefined ? Number(cursor) : undefined;
    let more = false;
    // `open` and `waived` are told apart after reading: read pages until the answer is full, at most 20.
    for (let pages = 0; ; pages++) {
      const want = limit - out.length;
      const rows = await this.d.drift.list(f, want + 1, before);
      let i = 0;
      while (i < rows.length && out.length < limit) {
        const { seq, row } = rows[i++] as { seq: number; row: EpisodeRow };
        before = seq;
        const v = this.view(row, waivers, now);
        if (!state || v.state === state) out.push(v);
      }
      if (out.length === limit) {
        // Rows left unread, or a full read whose last row filled the page: there may be more.
        more = i < rows.length || rows.length > want;
        break;
      }
      if (rows.length <= want) break; // nothing older
      if (pages === 19) {
        more = true; // a short page: the cursor goes on from where this one stopped reading
        break;
      }
    }
    return { episodes: out, nextCursor: more ? String(before) : null };
  }

  /** `/api/drift/groups`: one row per signature of the open episodes, most cells first. */
  async groups(q: DriftGroupsQuery): Promise<DriftGroupsResponse> {
    const now = this.d.clock.now();
    const { open, waivers } = await this.current(now);
    const by = new Map<string, { g: DriftGroup; sites: Set<string>; cells: Set<string> }>();
    const totals = { open: 0, waived: 0, checks: 0, failures: 0 };
    for (const e of open) {
      const waived = waiverOf(waivers, e, now) !== null;
      if (waived) totals.waived++;
      else if (e.kind === 'drift') totals.open++;
      else if (e.kind === 'check') totals.checks++;
      else totals.failures++;
      if (q.kind && e.kind !== q.kind) continue;
      let x = by.get(e.signature);
      if (!x) {
        const [, , address = ''] = e.signature.split(' ');
        x = {
          g: {
            signature: e.signature,
            kind: e.kind,
            type: e.type,
            address: e.kind === 'failure' ? '' : address,
            attributes: e.attributes,
            sites: 0,
            cells: 0,
            open: 0,
            waived: 0,
            firstSeen: iso(e.firstSeen),
            ...(e.detail ? { detail: e.detail } : {}),
          },
          sites: new Set(),
          cells: new Set(),
        };
        by.set(e.signature, x);
      }
      x.sites.add(e.site);
      x.cells.add(waivedKey(e));
      if (waived) x.g.waived++;
      else x.g.open++;
      if (iso(e.firstSeen) < x.g.firstSeen) x.g.firstSeen = iso(e.firstSeen);
    }
    const all = [...by.values()]
      .map((x) => ({ ...x.g, sites: x.sites.size, cells: x.cells.size }))
      .sort((a, b) => b.cells - a.cells || (a.signature < b.signature ? -1 : 1));
    const start = q.cursor !== undefined ? Number(q.cursor) : 0;
    const page = all.slice(start, start + q.limit);
    const next = start + q.limit < all.length ? String(start + q.limit) : null;
    return { groups: page, nextCursor: next, totals };
  }

  /** Cells (`site\0environment\0component`) whose every open drift episode an active waiver covers. */
  async waivedCells(now: number): Promise<ReadonlySet<string>> {
    const c = await this.current(now);
    if (c.waivedCells) return c.waivedCells;
    const { open, waivers } = c;
    const state = new Map<string, boolean>();
    for (const e of open) {
      if (e.kind !== 'drift') continue;
      const k = waivedKey(e);
      const waived = waiverOf(waivers, e, now) !== null;
      state.set(k, (state.get(k) ?? true) && waived);
    }
    c.waivedCells = new Set([...state].filter(([, w]) => w).map(([k]) => k));
    return c.waivedCells;
  }

  /** Gauges: open drift episodes not waived, waived ones, failing-check episodes. */
  async counts(): Promise<{ open: number; waived: number; checks: number }> {
    const g = await this.groups({ limit: 1 });
    return { open: g.totals.open, waived: g.totals.waived, checks: g.totals.checks };
  }

  async acknowledge(id: string, by: string): Promise<DriftEpisode | null> {
    const now = this.d.clock.now();
    const e = await this.d.drift.get(id);
    if (!e) return null;
    const next = { ...e, acknowledgedBy: by, acknowledgedAt: now };
    await this.d.drift.record({ episodes: [next], marks: [] });
    this.cache = null;
    return this.view(next, (await this.current(now)).waivers, now);
  }

  waiverView(w: WaiverRow, open: readonly EpisodeRow[], now: number): Waiver {
    return {
      id: w.id,
      pattern: w.pattern,
      attributes: w.attributes,
      sites: w.sites,
      environments: w.environments,
      components: w.components,
      expiresAt: iso(w.expiresAt),
      reason: w.reason,
      author: w.author,
      createdAt: iso(w.createdAt),
      removedAt: w.removedAt === null ? null : iso(w.removedAt),
      removedBy: w.removedBy,
      active: isActive(w, now),
      covers: open.filter((e) => covers(w, e, now)).length,
    };
  }

  async waivers(): Promise<Waiver[]> {
    const now = this.d.clock.now();
    const { open, waivers } = await this.current(now);
    return waivers.map((w) => this.waiverView(w, open, now));
  }

  /** Adds a waiver, audited as `waiver.add`; `expiresAt` already parsed by the caller. */
  async addWaiver(c: Omit<WaiverCreate, 'expires'> & { expiresAt: number }, who: Actor): Promise<Waiver> {
    const now = this.d.clock.now();
    const w: WaiverRow = {
      id: `w-${this.d.ids.next().toLowerCase()}`,
      pattern: c.pattern,
      attributes: c.attributes ? [...c.attributes].sort() : null,
      sites: c.sites ?? [],
      environments: c.environments ?? [],
      components: c.components ?? [],
      expiresAt: c.expiresAt,
      reason: c.reason,
      author: who.actor,
      createdAt: now,
      removedAt: null,
      removedBy: null,
    };
    await this.d.drift.putWaiver(w);
    this.cache = null;
    await this.audit('waiver.add', w, who, `${w.pattern} until ${iso(w.expiresAt)}: ${w.reason}`);
    const { open } = await this.current(now);
    return this.waiverView(w, open, now);
  }

  /** Removes a waiver (kept, marked removed), audited as `waiver.remove`; null when there is none. */
  async removeWaiver(id: string, who: Actor): Promise<Waiver | null> {
    const now = this.d.clock.now();
    const w = await this.d.drift.getWaiver(id);
    if (!w) return null;
    const removed = w.removedAt === null ? { ...w, removedAt: now, removedBy: who.actor } : w;
    await this.d.drift.putWaiver(removed);
    this.cache = null;
    await this.audit('waiver.remove', removed, who, w.pattern);
    const { open } = await this.current(now);
    return this.waiverView(removed, open, now);
  }

  private async audit(
    action: 'waiver.add' | 'waiver.remove',
    w: WaiverRow,
    who: Actor,
    detail: string,
  ): Promise<void> {
    if (who.via === 'api') return; // the route's own audit middleware records API calls
    await this.d.commit({
      audit: [
        {
          at: this.d.clock.now(),
          actor: who.actor,
          via: who.via,
          action,
          target: w.id,
          outcome: 'ok',
          detail: detail.slice(0, 500),
          address: who.address,
        },
      ],
    });
  }
}
