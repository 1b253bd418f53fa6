import { statSync } from 'node:fs';
import { join } from 'node:path';
import { partialDirOf } from '../adapters/publications/FsPublicationFiles.js';
import type { PublicationEntry } from '../core/publications/ports.js';

/** A publication from headquarters as `edge-agent status` shows it. */
export interface PublicationProgress {
  publicationId: string;
  name: string;
  fileKind: string;
  state: PublicationEntry['state'];
  /** Bytes held here: the partial file's length while downloading (the resume offset). */
  offset: number;
  size: number;
  reason: string | null;
}

const IN_PROGRESS: readonly string[] = ['queued', 'announced', 'downloading', 'verified'];

/**
 * Publications at this agent (the ledger's entries, read without writing: the daemon may be running), with
 * the partial file's length as the offset when it is further along than the last recorded chunk.
 */
export function readPublications(
  entries: readonly PublicationEntry[],
  dataDir: string,
): PublicationProgress[] {
  return entries.map((e) => {
    let offset = e.bytes;
    if (IN_PROGRESS.includes(e.state) && /^[0-9a-f]{64}$/.test(e.sha256)) {
      try {
        offset = Math.max(offset, statSync(join(partialDirOf(dataDir), e.sha256)).size);
      } catch {
        // no partial file yet
      }
    }
    return {
      publicationId: e.bundleId,
      name: e.name,
      fileKind: e.fileKind,
      state: e.state,
      offset: Math.min(offset, e.size),
      size: e.size,
      reason: e.reason ?? null,
    };
  });
}

const mib = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MiB`;

/** A fixed-width bar for a terminal: `[#########-----------]`. */
export function progressBar(done: number, total: number, width = 24): string {
  const f = total > 0 ? Math.min(1, done / total) : 1;
  const n = Math.round(f * width);
  return `[${'#'.repeat(n)}${'-'.repeat(width - n)}]`;
}

/** The `publications` section of `edge-agent status`: those in progress, then a count of the rest by state. */
export function renderPublications(list: readonly PublicationProgress[], tty: boolean): string {
  const active = list.filter((b) => IN_PROGRESS.includes(b.state));
  const done: Record<string, number> = {};
  for (const b of list) if (!IN_PROGRESS.includes(b.state)) done[b.state] = (done[b.state] ?? 0) + 1;
  const rest = Object.entries(done)
    .map(([s, n]) => `${n} ${s}`)
    .join(', ');
  const lines = [`publications   ${active.length} in progress${rest ? `; ${rest}` : ''}`];
  for (const b of active) {
    const pct = b.size > 0 ? Math.floor((b.offset / b.size) * 100) : 100;
    const bar = tty ? `${progressBar(b.offset, b.size)} ` : '';
    lines.push(`  ${b.name} (${b.fileKind})  ${b.state}  ${bar}${mib(b.offset)} of ${mib(b.size)} (${pct}%)`);
  }
  for (const b of list) if (b.state === 'refused') lines.push(`  ${b.name} refused: ${b.reason ?? '?'}`);
  return `${lines.join('\n')}\n`;
}
