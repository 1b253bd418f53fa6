import { decodeBundle } from '@driftline/protocol';

/** Bundles of one part of a batch, with each one's index in the whole batch. */
export interface BatchPart {
  bundles: Uint8Array[];
  indexes: number[];
}

/**
 * Splits a batch into parts of at most `maxDocs` documents each, in order, every bundle of a document
 * in the part of its document's first bundle (a document is merged once per part, its bundles
 * together). A bundle whose header names no document (refused at verification) joins the part being
 * filled. Why parts: each is merged, read and committed before the next one starts, so the hub holds
 * the merge outputs, rows and acks of `maxDocs` documents at once, not of the whole request
 * (docs/decisions/475-hub-memory-and-stalls-at-fleet-scale.md).
 */
export function batchParts(bundles: readonly Uint8Array[], maxDocs: number): BatchPart[] {
  const parts: (BatchPart & { docs: Set<string> })[] = [];
  const partOf = new Map<string, BatchPart>();
  for (const [index, bytes] of bundles.entries()) {
    const d = decodeBundle(bytes);
    const doc = d.ok && d.value.header.kind === 'doc-delta' ? d.value.header.doc : undefined;
    let part = doc === undefined ? parts.at(-1) : partOf.get(doc);
    if (!part) {
      const last = parts.at(-1);
      if (last && (doc === undefined || last.docs.size < maxDocs)) part = last;
      else {
        const fresh = { bundles: [], indexes: [], docs: new Set<string>() };
        parts.push(fresh);
        part = fresh;
      }
    }
    if (doc !== undefined && !partOf.has(doc)) {
      (part as BatchPart & { docs: Set<string> }).docs.add(doc);
      partOf.set(doc, part);
    }
    part.bundles.push(bytes);
    part.indexes.push(index);
  }
  return parts.map(({ bundles, indexes }) => ({ bundles, indexes }));
}
