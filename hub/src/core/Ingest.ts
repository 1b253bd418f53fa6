import * as A from '@automerge/automerge';
import { type AckPayload, encodeBundle, type Receipt } from '@driftline/protocol';
import type { Clock } from '../ports/Clock.js';
import type {
  AgentRow,
  CellRow,
  HubStore,
  PlanRequestRow,
  RunRow,
  SiteRow,
  WriteSet,
} from '../ports/HubStore.js';
import type { IdGen } from '../ports/IdGen.js';
import { nextOffset } from './clockOffset.js';
import type { DocReplicas } from './DocReplicas.js';
import { materialise, replacesCell, touched } from './materialise.js';
import { KeyCache, type RefusalReason, verifyDocDelta } from './verify.js';
import { webhookRows } from './webhooks.js';

export interface IngestDeps {
  store: HubStore;
  clock: Clock;
  ids: IdGen;
  replicas: DocReplicas;
  hubPrivateKey: CryptoKey;
  webhookUrls: readonly string[];
  log: { warn(obj: object, msg: string): void };
  /** Counts refusals by reason, and results merged. */
  count: { refused(reason: RefusalReason): void; merged(runs: number): void };
  ackLifetimeS?: number;
  compactEvery?: number;
}

/** What one batch changed, after its commit: for live events. */
export interface Committed {
  cells: CellRow[];
  runs: RunRow[];
  sites: string[];
  planRequests: PlanRequestRow[];
}

const cellKey = (site: string, env: string, comp: string) => `${site}\u0000${env}\u0000${comp}`;

/**
 * Verify → merge → materialise → commit (DESIGN step 7), one batch at a time. Everything a batch
 * changes, the acks included, goes into one transaction; receipts are returned after it commits (D1).
 */
export class Ingest {
  private chain: Promise<unknown> = Promise.resolve();
  private readonly keys = new KeyCache();
  private readonly listeners = new Set<(c: Committed) => void>();

  constructor(private readonly d: IngestDeps) {}

  onCommitted(fn: (c: Committed) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  accept(peerName: string, bundles: readonly Uint8Array[]): Promise<Receipt[]> {
    const next = this.chain.then(() => this.acceptNow(peerName, bundles));
    this.chain = next.catch(() => undefined);
    return next;
  }

  private async acceptNow(peerName: string, bundles: readonly Uint8Array[]): Promise<Receipt[]> {
    const { store, clock, replicas } = this.d;
    const now = clock.now();
    const receipts: Receipt[] = [];
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
    const touchedDocs = new Map<string, { site: string; agent: string }>();
    const poisoned = new Set<string>();
    const seen = new Set<string>();
    const by = 'hub';

    const lookup = async (site: string, agent: string) => {
      const k = `${site}/${agent}`;
      const hit = agents.get(k);
      if (hit) return hit;
      const row = await store.getAgent(site, agent);
      if (row) agents.set(k, row);
      return row;
    };
    const prevCell = async (site: string, env: string, comp: string) => {
      const k = cellKey(site, env, comp);
      if (!cells.has(k)) cells.set(k, await store.getCell(site, env, comp));
      return cells.get(k) ?? null;
    };

    for (const [index, bytes] of bundles.entries()) {
      const v = await verifyDocDelta(bytes, lookup, this.keys);
      if (!v.ok) {
        this.d.count.refused(v.reason);
        receipts.push({
          bundleId: v.bundleId as never,
          index,
          status: 'rejected',
          code: v.code,
          message: v.message,
          by,
        });
        continue;
      }
      const id = v.bundle.header.id;
      if (seen.has(id) || (await store.hasBundle(id))) {
        receipts.push({ bundleId: id, index, status: 'duplicate', by });
        continue;
      }
      seen.add(id);
      const { site, agent, id: docId, epoch } = v.doc;
      let doc = await replicas.get(docId);
      const before = A.getHeads(doc);
      doc = A.loadIncremental(doc, v.payload.changes);
      const after = A.getHeads(doc);
      const docSite = doc.site === undefined ? undefined : String(doc.site);
      const docAgent = doc.agent === undefined ? undefined : String(doc.agent);
      if ((docSite !== undefined && docSite !== site) || (docAgent !== undefined && docAgent !== agent)) {
        replicas.evict(docId);
        poisoned.add(docId);
        this.d.count.refused('agent-mismatch');
        receipts.push({
          bundleId: id,
          index,
          status: 'rejected',
          code: 'forbidden',
          message: `document '${docId}' says it belongs to '${docSite}/${docAgent}', not the signing agent '${site}/${agent}'`,
          by,
        });
        continue;
      }
      replicas.put(docId, doc);
      touchedDocs.set(docId, { site, agent });
      w.bundles.push({ id, receivedAt: now });
      const headsMoved = before.length !== after.length || before.some((h, i) => h !== after[i]);
      if (headsMoved || A.getMissingDeps(doc, []).length > 0) {
        w.docChunks.push({ docId, site, agent, epoch, bytes: v.payload.changes });
      }
      for (const b of v.payload.blobs)
        w.announcements.push({ sha256: b.sha256, docId, runId: b.runId ?? null });

      const agentRow = v.agent;
      const off = nextOffset(
        { offsetMs: agentRow.clockOffsetMs, sampledAt: agentRow.offsetSampledAt },
        v.bundle.header.created,
        now,
      );
      agentRow.clockOffsetMs = off.offsetMs;
      agentRow.offsetSampledAt = off.sampledAt;
      agentRow.lastContactAt = now;
      agentRow.upstream = peerName;
      sites.set(site, {
        ...((await store.getSite(site)) ?? { unreachableNotifiedFor: null }),
        ...sites.get(site),
        site,
        lastContactAt: now,
        upstream: peerName,
      });

      if (!headsMoved) {
        receipts.push({ bundleId: id, index, status: 'stored', by });
        continue;
      }
      const what = touched(A.diff(doc, before, after));
      const planHashes = new Map<string, string | null>();
      for (const k of what.runs) {
        const r = doc.runs?.[k];
        if (!r) continue;
        // Agents write strings as Automerge ImmutableString: make them plain before they reach SQLite.
        const env = String(r.environment);
        const comp = String(r.component);
        planHashes.set(`${env}/${comp}`, (await prevCell(site, env, comp))?.planHash ?? null);
      }
      const m = materialise(doc, what, {
        site,
        agent,
        docId,
        now,
        offsetMs: off.offsetMs,
        prevPlanHash: (k) => planHashes.get(k) ?? null,
      });
      if (m.invalid.length > 0)
        this.d.log.warn(
          { docId, invalid: m.invalid },
          'skipped document entries that fail the AgentDoc schema',
        );
      if (m.facts) Object.assign(agentRow, m.facts);
      w.runs.push(...m.runs);
      this.d.count.merged(m.runs.length);
      for (const next of m.cells) {
        const prev = await prevCell(site, next.environment, next.component);
        if (!replacesCell(prev, next, what.cells.has(`${next.environment}/${next.component}`))) continue;
        const row: CellRow = {
          ...next,
          plannedAt:
            prev && !what.cells.has(`${next.environment}/${next.component}`)
              ? prev.plannedAt
              : next.plannedAt,
          staleNotifiedFor: prev?.staleNotifiedFor ?? null,
        };
        const k = cellKey(site, next.environment, next.component);
        cells.set(k, row);
        changedCells.set(k, row);
        const { staleNotifiedFor: _s, planHash: _p, ...hist } = row;
        w.history.push(hist);
        w.webhooks.push(...webhookRows(this.d.webhookUrls, prev, row, now));
      }
      for (const run of m.runs) {
        if (!requests.has(site)) requests.set(site, await store.listPlanRequests({ site, open: true }));
        for (const req of requests.get(site) ?? []) {
          const started = Date.parse(run.summary.startedAt) - off.offsetMs;
          if (
            doneRequests.has(req.requestId) ||
            req.environment !== run.environment ||
            req.component !== run.component
          )
            continue;
          if (started < req.requestedAt) continue;
          doneRequests.set(req.requestId, { ...req, state: 'done', doneAt: now, runId: run.runId });
        }
      }
      receipts.push({ bundleId: id, index, status: 'stored', by });
    }

    for (const [docId, who] of touchedDocs) {
      if (poisoned.has(docId)) continue;
      const doc = await replicas.get(docId);
      const held = new Set(await store.heldBlobsFor(docId));
      for (const a of w.announcements)
        if (a.docId === docId && (await store.getBlob(a.sha256))) held.add(a.sha256);
      w.downlink.push({
        site: who.site,
        agent: who.agent,
        kind: 'ack',
        docId,
        requestId: null,
        expiresAt: now + (this.d.ackLifetimeS ?? 30 * 86_400) * 1000,
        bytes: await this.ack(who, docId, A.getHeads(doc), [...held].sort(), now),
      });
    }

    try {
      await store.commit({
        ...w,
        agents: [...agents.values()].filter((a) => a.lastContactAt === now),
        cells: [...changedCells.values()],
        sites: [...sites.values()],
        planRequests: [...doneRequests.values()],
      });
    } catch (e) {
      for (const docId of touchedDocs.keys()) replicas.evict(docId);
      throw e;
    }
    for (const docId of poisoned) replicas.evict(docId);
    for (const c of w.docChunks) {
      if (replicas.noteChunk(c.docId, this.d.compactEvery ?? 50)) await replicas.compact(c.docId);
    }
    if (w.runs.length + changedCells.size + sites.size + doneRequests.size > 0) {
      const c: Committed = {
        cells: [...changedCells.values()],
        runs: w.runs,
        sites: [...sites.keys()],
        planRequests: [...doneRequests.values()],
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
