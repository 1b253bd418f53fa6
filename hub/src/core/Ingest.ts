import {
  type AckPayload,
  type ClockEstimate,
  cellKey as docCellKey,
  encodeBundle,
  endpointText,
  type Receipt,
} from '@driftline/protocol';
import type { AgentRow, CellRow, PlanRequestRow, SiteRow, WriteSet } from '../ports/HubStore.js';
import { applyRows } from './applyRows.js';
import { nextOffset } from './clockOffset.js';
import type { Committed, IngestDeps } from './ingestTypes.js';
import { materialise, replacesCell } from './materialise.js';
import type { Segment } from './mergeDoc.js';
import { answersRequest, type PlanAnswer, RunCells, readCell } from './refCells.js';
import { type Refusal, Rejections } from './rejections.js';
import { SegmentEntries } from './segmentEntries.js';
import { KeyCache, type Verified, verifyDocDelta } from './verify.js';
import { webhookRows } from './webhooks.js';

export type { Committed, IngestDeps } from './ingestTypes.js';

const cellKey = (site: string, env: string, comp: string, ref?: string | null) =>
  `${site}\u0000${env}\u0000${comp}\u0000${ref ?? ''}`;
type Ok = Extract<Verified, { ok: true }>;
type Accepted = { index: number; id: Ok['bundle']['header']['id']; v: Ok };

/**
 * Verify → merge → materialise → commit (DESIGN step 7), one batch at a time. Everything a batch
 * changes, the acks included, goes into one transaction; receipts are returned after it commits (D1).
 */
export class Ingest {
  private chain: Promise<unknown> = Promise.resolve();
  private readonly keys = new KeyCache();
  private readonly listeners = new Set<(c: Committed) => void>();
  private readonly rejections: Rejections;

  constructor(private readonly d: IngestDeps) {
    this.rejections = new Rejections({
      ids: d.ids,
      hubPrivateKey: d.hubPrivateKey,
      onDropped: (site, n) =>
        d.log.warn({ site, refusals: n }, 'no rejection sent: the site has the most agents with one already'),
    });
  }

  onCommitted(fn: (c: Committed) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /**
   * `clocks`: each bundle source's clock minus the hub's, as its path composed it from round trips per hop
   * (docs/decisions/070-clock-offsets.md); without it the offset falls back to one-way transit.
   */
  accept(
    peerName: string,
    bundles: readonly Uint8Array[],
    clocks?: (source: string) => ClockEstimate | null,
  ): Promise<Receipt[]> {
    const next = this.chain.then(() => this.acceptNow(peerName, bundles, clocks));
    this.chain = next.catch(() => undefined);
    return next;
  }

  private async acceptNow(
    peerName: string,
    bundles: readonly Uint8Array[],
    clocks?: (source: string) => ClockEstimate | null,
  ): Promise<Receipt[]> {
    const { store, clock, replicas } = this.d;
    const now = clock.now();
    const w: Required<
      Pick<WriteSet, 'bundles' | 'docChunks' | 'runs' | 'history' | 'announcements' | 'webhooks' | 'downlink'>
    > = {
      bundles: [],
      docChunks: [],
      runs: [],
      history: [],
      announcements: [],
      webhooks: [],
      downlink: [],
    };
    const agents = new Map<string, AgentRow>();
    const cells = new Map<string, CellRow | null>();
    const changedCells = new Map<string, CellRow>();
    const sites = new Map<string, SiteRow>();
    const requests = new Map<string, PlanRequestRow[]>();
    const doneRequests = new Map<string, PlanRequestRow>();
    const touchedDocs = new Map<string, { site: string; agent: string; heads: string[] }>();
    const deliveries: Committed['deliveries'] = [];
    const applies: NonNullable<WriteSet['applies']> = [];
    const poisoned = new Set<string>();
    const seen = new Set<string>();
    // Refusals of bundles that name their agent: answered on the downlink (DESIGN step 8).
    const refusals: Refusal[] = [];
    const by = 'hub';

    // One lookup per agent per batch, shared by its bundles: they update the same row.
    const lookups = new Map<string, Promise<AgentRow | null>>();
    const lookup = (site: string, agent: string) => {
      const k = `${site}/${agent}`;
      let p = lookups.get(k);
      if (!p) {
        p = store.getAgent(site, agent).then((row) => {
          if (row) agents.set(k, row);
          return row;
        });
        lookups.set(k, p);
      }
      return p;
    };
    const prevCell = async (site: string, env: string, comp: string, ref?: string | null) => {
      const k = cellKey(site, env, comp, ref);
      if (!cells.has(k)) cells.set(k, await readCell(store, site, env, comp, ref));
      return cells.get(k) ?? null;
    };

    // Signatures are checked by WebCrypto, asynchronously: verifying the whole batch at once overlaps them.
    const verified = await Promise.all(bundles.map((bytes) => verifyDocDelta(bytes, lookup, this.keys)));
    const slots: (Receipt | null)[] = bundles.map(() => null);
    const groups = new Map<string, { site: string; agent: string; epoch: number; items: Accepted[] }>();
    for (const [index, v] of verified.entries()) {
      if (!v.ok) {
        this.d.count.refused(v.reason);
        if (v.source && v.bundleId) refusals.push({ ...v.source, code: v.code, bundleId: v.bundleId });
        slots[index] = {
          bundleId: v.bundleId as never,
          index,
          status: 'rejected',
          code: v.code,
          message: v.message,
          by,
        };
        continue;
      }
      const id = v.bundle.header.id;
      if (seen.has(id) || (await store.hasBundle(id))) {
        slots[index] = { bundleId: id, index, status: 'duplicate', by };
        continue;
      }
      seen.add(id);
      const g = groups.get(v.doc.id) ?? {
        site: v.doc.site,
        agent: v.doc.agent,
        epoch: v.doc.epoch,
        items: [],
      };
      g.items.push({ index, id, v });
      groups.set(v.doc.id, g);
    }

    // Each document's bundles are merged together (in merge workers when the hub has them, all
    // documents at once), then what they changed is materialised here, one document at a time.
    const jobs = [...groups].map(([docId, g]) => {
      const job = replicas.merge(
        docId,
        g.site,
        g.agent,
        g.items.map((i) => i.v.payload.changes),
      );
      job.catch(() => {}); // awaited below, in order; a failure fails the batch there
      return { docId, ...g, job };
    });
    for (const { docId, site, agent, epoch, items, job } of jobs) {
      const { out, memo } = await job;
      let offsetMs: number | null = null;
      const read = async (seg: Segment | null | undefined) => {
        if (!seg) return;
        const what = seg.touched;
        const doc = new SegmentEntries(seg, memo);
        const planHashes = new Map<string, string | null>();
        const runCells = new RunCells(doc, what.cells);
        for (const k of what.runs) {
          const r = doc.entry('runs', k) as { environment?: unknown; component?: unknown } | undefined;
          if (!r) continue;
          const env = String(r.environment);
          const comp = String(r.component);
          const at = runCells.atRef(r);
          planHashes.set(docCellKey(env, comp, at), (await prevCell(site, env, comp, at))?.planHash ?? null);
        }
        const m = materialise(doc, what, {
          site,
          agent,
          docId,
          now,
          offsetMs: offsetMs ?? 0,
          prevPlanHash: (k) => planHashes.get(k) ?? null,
          runCells,
        });
        if (m.invalid.length > 0)
          this.d.log.warn(
            { docId, invalid: m.invalid },
            'skipped document entries that fail the AgentDoc schema',
          );
        const agentRow = agents.get(`${site}/${agent}`);
        if (m.facts && agentRow) Object.assign(agentRow, m.facts);
        w.runs.push(...m.runs);
        this.d.count.merged(m.runs.length);
        for (const next of m.cells) {
          const cellTouched = what.cells.has(docCellKey(next.environment, next.component, next.atRef));
          const prev = await prevCell(site, next.environment, next.component, next.atRef);
          if (!replacesCell(prev, next, cellTouched)) continue;
          const row: CellRow = {
            ...next,
            plannedAt: prev && !cellTouched ? prev.plannedAt : next.plannedAt,
            staleNotifiedFor: prev?.staleNotifiedFor ?? null,
          };
          const k = cellKey(site, next.environment, next.component, next.atRef);
          cells.set(k, row);
          changedCells.set(k, row);
          if (row.atRef) continue; // `@ref` cells: no history (the point-in-time matrix) and no webhooks
          const { staleNotifiedFor: _s, planHash: _p, ...hist } = row;
          w.history.push(hist);
          w.webhooks.push(...webhookRows(this.d.webhookUrls, prev, row, now));
        }
        // A request is answered by a run that started after it, or, when the plan came out the same
        // as before, by the cell's confirmation (no new run is sent for an unchanged plan).
        const answer = async (a: PlanAnswer, runId: string) => {
          if (!requests.has(site)) requests.set(site, await store.listPlanRequests({ site, open: true }));
          for (const req of requests.get(site) ?? []) {
            if (doneRequests.has(req.requestId) || !answersRequest(req, a)) continue;
            doneRequests.set(req.requestId, { ...req, state: 'done', doneAt: now, runId });
          }
        };
        for (const run of m.runs) {
          const started = Date.parse(run.summary.startedAt) - (offsetMs ?? 0);
          await answer({ ...run, at: started }, run.runId);
        }
        for (const cell of m.cells) await answer({ ...cell, at: cell.plannedAt }, cell.runId);
      };

      let segment = 0;
      for (const [n, { index, id, v }] of items.entries()) {
        const merged = out.items[n];
        if (!merged?.ok) {
          // What the bundles before it changed is good: read it, then go on without this one.
          await read(out.segments[segment++]);
          const mismatch = merged?.reason === 'agent-mismatch' ? merged : null;
          this.d.count.refused(mismatch ? 'agent-mismatch' : 'bad-bundle');
          if (mismatch) poisoned.add(docId);
          refusals.push({ site, agent, code: mismatch ? 'forbidden' : 'bad-bundle', bundleId: id });
          slots[index] = {
            bundleId: id,
            index,
            status: 'rejected',
            code: mismatch ? 'forbidden' : 'bad-bundle',
            message: mismatch
              ? `document '${docId}' says it belongs to '${String(mismatch.docSite)}/${String(mismatch.docAgent)}', not the signing agent '${site}/${agent}'`
              : `the bundle's changes are not Automerge changes (${merged?.reason === 'bad-changes' ? merged.message : 'not merged'}): the agent must resend them`,
            by,
          };
          continue;
        }
        w.bundles.push({ id, receivedAt: now });
        if (merged.changed && !out.whole)
          w.docChunks.push({ docId, site, agent, epoch, bytes: v.payload.changes });
        for (const b of v.payload.blobs)
          w.announcements.push({ sha256: b.sha256, docId, runId: b.runId ?? null });

        const agentRow = v.agent;
        const off = nextOffset(
          {
            offsetMs: agentRow.clockOffsetMs,
            uncertaintyMs: agentRow.clockOffsetUncertaintyMs ?? null,
            sampledAt: agentRow.offsetSampledAt,
          },
          v.bundle.header.created,
          now,
          clocks?.(endpointText(v.bundle.header.source)),
        );
        agentRow.clockOffsetMs = off.offsetMs;
        agentRow.clockOffsetUncertaintyMs = off.uncertaintyMs;
        agentRow.offsetSampledAt = off.sampledAt;
        agentRow.lastContactAt = now;
        agentRow.upstream = peerName;
        offsetMs = off.offsetMs;
        sites.set(site, {
          ...(sites.get(site) ?? (await store.getSite(site)) ?? { unreachableNotifiedFor: null }),
          site,
          lastContactAt: now,
          upstream: peerName,
        });
        slots[index] = { bundleId: id, index, status: 'stored', by };
        touchedDocs.set(docId, { site, agent, heads: out.heads });
      }
      await read(out.segments[segment]);
      if (out.bundles !== undefined) deliveries.push({ docId, site, agent, states: out.bundles });
      if (out.applies !== undefined) {
        const a = applyRows(site, agent, out.applies, offsetMs ?? 0);
        applies.push(...a.rows);
        if (a.invalid.length > 0)
          this.d.log.warn({ docId, invalid: a.invalid }, 'skipped apply records that fail their schema');
      }
      if (out.whole) w.docChunks.push({ docId, site, agent, epoch, bytes: out.whole, whole: true });
    }
    const receipts = slots as Receipt[];

    const acks: Promise<void>[] = [];
    w.downlink.push(...(await this.rejections.rows(refusals, now)));
    for (const [docId, who] of touchedDocs) {
      this.rejections.accepted(who.site, who.agent);
      if (poisoned.has(docId)) continue;
      const heads = who.heads;
      const held = new Set(await store.heldBlobsFor(docId));
      for (const a of w.announcements)
        if (a.docId === docId && (await store.getBlob(a.sha256))) held.add(a.sha256);
      const row = {
        site: who.site,
        agent: who.agent,
        kind: 'ack' as const,
        docId,
        requestId: null,
        expiresAt: now + (this.d.ackLifetimeS ?? 30 * 86_400) * 1000,
        bytes: new Uint8Array(0) as Uint8Array,
      };
      w.downlink.push(row);
      // Signed concurrently; the header (and its id) is built before the first await, in order.
      acks.push(
        this.ack(who, docId, heads, [...held].sort(), now).then((bytes) => {
          row.bytes = bytes;
        }),
      );
    }
    await Promise.all(acks);

    try {
      await store.commit({
        ...w,
        agents: [...agents.values()].filter((a) => a.lastContactAt === now),
        cells: [...changedCells.values()],
        sites: [...sites.values()],
        planRequests: [...doneRequests.values()],
        applies,
      });
    } catch (e) {
      replicas.forget(touchedDocs.keys());
      throw e;
    } finally {
      replicas.settle();
    }
    if (w.runs.length + changedCells.size + sites.size + doneRequests.size + deliveries.length > 0) {
      const c: Committed = {
        cells: [...changedCells.values()],
        runs: w.runs,
        sites: [...sites.keys()],
        planRequests: [...doneRequests.values()],
        deliveries,
      };
      for (const fn of this.listeners) fn(c);
    }
    return receipts;
  }

  /** A signed ack (the hub's heads for that epoch) for the site's downlink (DESIGN step 8, D4). */
  async ack(
    who: { site: string; agent: string },
    docId: string,
    heads: string[],
    blobs: string[],
    now: number,
  ): Promise<Uint8Array> {
    const payload: AckPayload = {
      agent: who.agent as never,
      doc: docId,
      heads,
      blobs: blobs as never,
      committedAt: now,
    };
    return encodeBundle(
      {
        id: this.d.ids.next() as never,
        kind: 'ack',
        source: 'hub',
        destination: { site: who.site as never, agent: who.agent as never },
        created: now,
        lifetimeS: this.d.ackLifetimeS ?? 30 * 86_400,
        priority: 'control',
        doc: docId,
        heads,
      },
      payload,
      this.d.hubPrivateKey,
    );
  }
}
