import { AgentFactsSchema, docId, parseDocId } from '@driftline/protocol';
import type { IngestStore } from '../ports/HubStore.js';
import type { RunRow } from '../ports/hubRows.js';
import { DocReader } from './DocReader.js';
import { loadStored } from './mergeDoc.js';

/** Epochs after a run's own in which its agent's facts are looked for (the agent writes them into its newest). */
const MAX_LATER_EPOCHS = 8;
const UploadsSchema = AgentFactsSchema.shape.detailUploads;

/** Where a pending detail blob is, as its agent's signed facts say (docs/decisions/220). */
export interface PendingDetail {
  site: string;
  /** The upstream that took it, as the agent names it; null: not uploaded yet (or the agent predates it). */
  uploadedTo: string | null;
  /** When, hub time (the agent's clock corrected by its offset); null with `uploadedTo`. */
  uploadedAt: number | null;
  /** `detail: pending at <site> (uploaded to <upstream> at <time>, no receipt yet)`. */
  text: string;
}

/**
 * Reads, for a run whose detail is pending at the hub, where the agent says the blob is: the
 * `detailUploads` of its newest document the hub holds. Only called for a pending detail (a run view),
 * so loading the document (a few ms) is paid only there.
 */
export async function pendingDetail(
  store: Pick<IngestStore, 'docChunks' | 'getAgent'>,
  run: RunRow,
): Promise<PendingDetail> {
  const p = parseDocId(run.docId);
  let upload: { upstream: string; uploadedAt: number } | null = null;
  for (let e = p?.epoch ?? 0; p && e <= p.epoch + MAX_LATER_EPOCHS; e++) {
    const chunks = await store.docChunks(docId(p.site, p.agent, e));
    if (chunks.length === 0) break;
    const h = loadStored(chunks);
    try {
      const facts = new DocReader(h).facts() as { detailUploads?: unknown } | undefined;
      const list = UploadsSchema.safeParse(facts?.detailUploads);
      // The newest epoch's facts are the agent's latest word: an absent entry there means none.
      upload = (list.success && list.data?.find((u) => u.runId === run.runId)) || null;
    } finally {
      h.free();
    }
  }
  const agent = await store.getAgent(run.site, run.agent);
  const uploadedAt = upload ? upload.uploadedAt - (agent?.clockOffsetMs ?? 0) : null;
  const where = upload
    ? `uploaded to ${upload.upstream} at ${new Date(uploadedAt as number).toISOString()}, no receipt yet`
    : 'not uploaded yet';
  return {
    site: run.site,
    uploadedTo: upload?.upstream ?? null,
    uploadedAt,
    text: `detail: pending at ${run.site} (${where})`,
  };
}
