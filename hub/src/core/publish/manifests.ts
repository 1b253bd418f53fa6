import { wire2SiteId } from '@driftline/hop';
import {
  type BlobManifest,
  type BundleHeader,
  type DocPublicationState,
  encodeBundle,
  type FileKind,
  wire2,
} from '@driftline/protocol';
import type { AgentRow, DownlinkRow } from '../../ports/HubStore.js';
import type { DeliveryRow, PublicationRow } from '../../ports/PublicationStore.js';

/** Default lifetime of a publication's manifest at relays and sites. */
export const DEFAULT_PUBLICATION_TTL_S = 30 * 86_400;

export interface PublishInput {
  publicationId: string;
  name: string;
  fileKind: FileKind;
  sha256: string;
  size: number;
  sites: string[];
  now: number;
  ttlS?: number;
  /** Per site, the earlier publications this one supersedes there (named in that site's manifest). */
  supersedes?: Record<string, string[]>;
  /** When this sending happens, if later than `now` (a resend, decision 300). */
  sentAt?: number;
  /** Queue manifests for these of `sites` only (a resend, decision 300); default: every target site. */
  onlySites?: string[];
  /**
   * The file itself, to travel inside each manifest (decision 360; at most `MAX_INLINE_PUBLICATION_BYTES`).
   * Resends go without it: the relays hold the blob by then, and the agent fetches it.
   */
  inline?: Uint8Array;
  /** The sites whose manifest carries `inline` (their agents read it); default every site. */
  inlineSites?: readonly string[];
  /**
   * The sites whose manifest goes as the compact v2 `publication` message (every live agent reads it and
   * every relay on the way carries it, decision 505); default none.
   */
  wire2Sites?: readonly string[];
  /**
   * Of `wire2Sites`, those whose agents (and relays on the way) read a git bundle's heads packed (decision
   * 520): an inline `git` file goes so there.
   */
  gitHeadsSites?: readonly string[];
}

/**
 * Which manifest form each site's live agents read: inline files (decision 360), compact (decision 505), a
 * git bundle's heads packed in the compact form (decision 520).
 */
export function siteReads(
  agents: readonly Pick<
    AgentRow,
    'site' | 'revokedAt' | 'readsInline' | 'readsWire2Publications' | 'readsWire2GitHeads'
  >[],
): Map<string, { inline: boolean; wire2: boolean; gitHeads: boolean }> {
  const out = new Map<string, { inline: boolean; wire2: boolean; gitHeads: boolean }>();
  for (const a of agents) {
    if (a.revokedAt) continue;
    const r = out.get(a.site) ?? { inline: true, wire2: true, gitHeads: true };
    const wire2 = r.wire2 && a.readsWire2Publications === true;
    out.set(a.site, {
      inline: r.inline && a.readsInline === true,
      wire2,
      gitHeads: wire2 && r.gitHeads && a.readsWire2GitHeads === true,
    });
  }
  return out;
}

/** The publication's record (what `PublicationStore.publish` keeps). */
export function publicationRow(input: PublishInput): PublicationRow {
  return {
    publicationId: input.publicationId,
    name: input.name,
    fileKind: input.fileKind,
    sha256: input.sha256,
    size: input.size,
    sites: input.sites,
    publishedAt: input.now,
    expiresAt: input.now + (input.ttlS ?? DEFAULT_PUBLICATION_TTL_S) * 1000,
  };
}

/**
 * The signed `blob` manifests of one publication, one per target site, queued at `bulk`
 * (docs/architecture.md#bundles-to-outposts): the hub's key signs name, kind, size, sha256, target sites and
 * expiry (a manifest carrying its file `inline`, decision 360, names only the one site in its header). The
 * manifest's `bundleId` is the publication id (its wire name; decision 170).
 */
export async function buildManifests(
  input: PublishInput,
  hubPrivateKey: CryptoKey,
  newId: () => string,
): Promise<{ publication: PublicationRow; downlink: Omit<DownlinkRow, 'seq'>[] }> {
  const ttlS = input.ttlS ?? DEFAULT_PUBLICATION_TTL_S;
  const expiresAt = input.now + ttlS * 1000;
  // A manifest that carries its file (decision 360) leaves out what only costs bytes on a costly link:
  // the content type (nothing at a site reads it) and the target sites (its header names the one it is for).
  const common = {
    sha256: input.sha256 as BlobManifest['sha256'],
    size: input.size,
    name: input.name,
    fileKind: input.fileKind,
    expiresAt,
    bundleId: input.publicationId,
  };
  const fetched: BlobManifest = {
    ...common,
    contentType: 'application/octet-stream',
    sites: input.sites as BlobManifest['sites'],
  };
  const inlined: BlobManifest | null = input.inline ? { ...common, inline: input.inline } : null;
  const inlineSites = new Set(input.inlineSites ?? input.sites);
  const wire2Sites = new Set(input.wire2Sites ?? []);
  const gitHeadsSites = new Set(input.gitHeadsSites ?? []);
  const downlink: Omit<DownlinkRow, 'seq'>[] = [];
  const row = (site: string, bytes: Uint8Array): Omit<DownlinkRow, 'seq'> => ({
    site,
    agent: null,
    kind: 'blob',
    docId: null,
    requestId: null,
    expiresAt,
    bytes,
  });
  for (const site of input.onlySites ?? input.sites) {
    const supersedes = input.supersedes?.[site];
    const inline = input.inline && inlineSites.has(site) ? input.inline : undefined;
    const compact = wire2Sites.has(site)
      ? await compactManifest(
          input,
          site,
          { expiresAt, supersedes, inline, packGitHeads: gitHeadsSites.has(site) },
          hubPrivateKey,
        )
      : null;
    if (compact) {
      downlink.push(row(site, compact));
      continue;
    }
    const header: BundleHeader & { kind: 'blob' } = {
      id: newId() as BundleHeader['id'],
      kind: 'blob',
      source: 'hub',
      destination: { site } as BundleHeader['destination'],
      created: input.now,
      lifetimeS: ttlS,
      priority: 'bulk',
    };
    // Only when there is something to supersede, so manifests read the same as before otherwise.
    const manifest = inline ? (inlined as BlobManifest) : fetched;
    const payload: BlobManifest = supersedes?.length ? { ...manifest, supersedes } : manifest;
    downlink.push(row(site, await encodeBundle(header, payload, hubPrivateKey)));
  }
  return { publication: publicationRow(input), downlink };
}

/**
 * One site's manifest as the hub's signed v2 `publication` message (decision 505), to the site's short id;
 * null when the publication has no compact form (an id that is not a ULID). Its `seq` is the seconds since
 * the publish, from 1: a resend (decision 300) is a new message, not a copy a relay passes over as held.
 */
async function compactManifest(
  input: PublishInput,
  site: string,
  o: {
    expiresAt: number;
    supersedes: readonly string[] | undefined;
    inline: Uint8Array | undefined;
    packGitHeads: boolean;
  },
  hubPrivateKey: CryptoKey,
): Promise<Uint8Array | null> {
  const body = wire2.publicationBody({
    publicationId: input.publicationId,
    name: input.name,
    fileKind: input.fileKind,
    sha256: input.sha256,
    size: input.size,
    expiresAt: o.expiresAt,
    ...(o.inline ? { inline: o.inline } : {}),
    ...(o.supersedes?.length ? { supersedes: o.supersedes } : {}),
    packGitHeads: o.packGitHeads,
  });
  if (!body) return null;
  const seq = Math.max(1, Math.round(((input.sentAt ?? input.now) - input.now) / 1000) + 1);
  return wire2.encodeMessage(
    { kind: 'publication', from: wire2.HUB_NODE_ID, to: wire2SiteId(site), seq, body },
    hubPrivateKey,
  );
}

/** Delivery rows from an agent document's `bundles` map (publications; plain data), stamped with hub time. */
export function deliveryRows(
  site: string,
  agent: string,
  states: Record<string, DocPublicationState> | undefined,
  now: number,
): DeliveryRow[] {
  return Object.values(states ?? {}).map((p) => ({
    publicationId: p.bundleId,
    site,
    agent,
    state: p.state,
    bytes: p.bytes,
    reason: p.reason ?? null,
    updatedAt: now,
  }));
}
