import { decodeBundle } from '@driftline/protocol';

/** Bundles of one part of a batch, with each one's index in the whole batch. */
export interface BatchPart {
  bundles: Uint8Array[];
  indexes: number[];
  /**
   * The documents the part's bundles name in their headers, before anything is verified: the ones the
   * part locks against other hubs (`HubStore.lockDocs`). A bundle verifies only for the document its
   * header names, so every accepted bundle's document is among them.
   */
  docs: string[];
}

/**
 * Splits a batch into parts of at most `maxDocs` documents each, in order, every bundle of a document
 * in the part of its document's first bundle (a document is merged once per part, its bundles
 * together). A bundle whose header names no document (refused at verification) joins the part being
 * filled. Why parts: each is merged, read and committed before the next one starts, so the hub holds
 * the merge outputs, rows and acks of `maxDocs` documents at once, not of the whole request
 * (docs/decisions/475-hub-memory-and-stalls-at-fleet-scale.md).
 */
export function batchParts(
  bundles: readonly Uint8Array[],
  maxDocs: number,
  /** The document of a bundle v1's header does not name (a hop v2 push, decision 495), by index. */
  docOf: (index: number) => string | undefined = () => undefined,
): BatchPart[] {
  const parts: BatchPart[] = [];
  const partOf = new Map<string, BatchPart>();
  for (const [index, bytes] of bundles.entries()) {
    const d = decodeBundle(bytes);
    const doc = d.ok && d.value.header.kind === 'doc-delta' ? d.value.header.doc : docOf(index);
    let part = doc === undefined ? parts.at(-1) : partOf.get(doc);
    if (!part) {
      const last = parts.at(-1);
      if (last && (doc === undefined || last.docs.length < maxDocs)) part = last;
      else {
        part = { bundles: [], indexes: [], docs: [] };
        parts.push(part);
      }
    }
    if (doc !== undefined && !partOf.has(doc)) {
      part.docs.push(doc);
      partOf.set(doc, part);
    }
    part.bundles.push(bytes);
    part.indexes.push(index);
  }
  return parts;
}
