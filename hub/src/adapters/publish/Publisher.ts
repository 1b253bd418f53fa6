import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { type FileKind, MAX_INLINE_PUBLICATION_BYTES, SiteIdSchema } from '@driftline/protocol';
import { buildManifests, publicationRow, siteReads } from '../../core/publish/manifests.js';
import type { BlobFiles } from '../../ports/BlobFiles.js';
import type { Clock } from '../../ports/Clock.js';
import type { AgentRow, ReadStore, StoreWrites } from '../../ports/HubStore.js';
import type { IdGen } from '../../ports/IdGen.js';
import type { PublicationRow, PublicationStore } from '../../ports/PublicationStore.js';

export interface PublishRequest {
  /** Site ids, or `['all']` for every site with an enrolled agent. */
  sites: string[];
  name: string;
  fileKind: FileKind;
  ttlS?: number;
  /**
   * Carry the file inside its manifest when it is at most `MAX_INLINE_PUBLICATION_BYTES` (decision 360):
   * the site gets it with the announcement, no fetch. Absent: for the sites whose every agent says it reads
   * such a manifest (its `reads` fact; an older agent refuses one); true: every site; false: none.
   */
  inline?: boolean;
}

export type PublishResult =
  | { ok: true; publication: PublicationRow }
  | { ok: false; code: 'bad-request' | 'payload-too-large'; message: string };

/**
 * Publishes a file to sites: streams it to disk while hashing (never held in memory), stores it
 * content-addressed in the hub's blob directory (served by hop's `GET /v1/blobs/:sha256` with Range),
 * then queues one signed manifest per site on the downlink and records the publication.
 */
export class Publisher {
  constructor(
    private readonly d: {
      store: StoreWrites & Pick<ReadStore, 'listAgents'>;
      publications: PublicationStore;
      blobs: BlobFiles;
      tmpDir: string;
      hubPrivateKey: CryptoKey;
      clock: Clock;
      ids: IdGen;
      maxBytes?: number;
    },
  ) {}

  async resolveSites(
    requested: string[],
  ): Promise<{ ok: true; sites: string[] } | { ok: false; message: string }> {
    if (requested.length === 1 && requested[0] === 'all') {
      const sites = [...new Set((await this.liveAgents()).map((a) => a.site))];
      if (sites.length === 0) return { ok: false, message: 'no enrolled sites yet (enrol an agent first)' };
      return { ok: true, sites: sites.sort() };
    }
    for (const s of requested) {
      if (!SiteIdSchema.safeParse(s).success) return { ok: false, message: `'${s}' is not a site id` };
    }
    return { ok: true, sites: [...new Set(requested)] };
  }

  /** The agents not revoked, of one site or of all. */
  private async liveAgents(site?: string): Promise<AgentRow[]> {
    return (await this.d.store.listAgents(site)).filter((a) => !a.revokedAt);
  }

  /**
   * Per site, the manifest's form: the file inline where asked (`always`: every site, `buildManifests`'
   * default) or where every live agent reads inline manifests (decision 360), and the compact v2 form
   * where every live agent reads that (decision 505), a git bundle's heads packed in it likewise (decision
   * 520). A site with no live agent gets v1's fetched form.
   */
  private async formsFor(
    sites: readonly string[],
    kept: Buffer[] | null,
    always: boolean,
  ): Promise<{
    inline?: Uint8Array;
    inlineSites?: string[];
    wire2Sites?: string[];
    gitHeadsSites?: string[];
  }> {
    // One site (the usual `--site`): the store's query by site, not every agent of the fleet.
    const reads = siteReads(await this.d.store.listAgents(sites.length === 1 ? sites[0] : undefined));
    const wire2Sites = sites.filter((site) => reads.get(site)?.wire2 === true);
    const gitHeadsSites = wire2Sites.filter((site) => reads.get(site)?.gitHeads === true);
    const forms = {
      ...(wire2Sites.length > 0 ? { wire2Sites } : {}),
      ...(gitHeadsSites.length > 0 ? { gitHeadsSites } : {}),
    };
    if (!kept) return forms;
    const inline = new Uint8Array(Buffer.concat(kept));
    if (always) return { ...forms, inline };
    const inlineSites = sites.filter((site) => reads.get(site)?.inline === true);
    return inlineSites.length > 0 ? { ...forms, inline, inlineSites } : forms;
  }

  async publish(body: Readable, req: PublishRequest): Promise<PublishResult> {
    const sites = await this.resolveSites(req.sites);
    if (!sites.ok) return { ok: false, code: 'bad-request', message: sites.message };
    await mkdir(this.d.tmpDir, { recursive: true });
    const publicationId = this.d.ids.next();
    const tmp = join(this.d.tmpDir, `publish-${publicationId}`);
    const hash = createHash('sha256');
    let size = 0;
    const max = this.d.maxBytes ?? Number.POSITIVE_INFINITY;
    // The file's bytes while it could still go inline, dropped as soon as it is over the cap.
    let kept: Buffer[] | null = req.inline !== false ? [] : null;
    try {
      await pipeline(
        body,
        async function* (source) {
          for await (const chunk of source as AsyncIterable<Buffer>) {
            size += chunk.length;
            if (size > max) throw new TooLarge();
            hash.update(chunk);
            if (size > MAX_INLINE_PUBLICATION_BYTES) kept = null;
            else kept?.push(chunk);
            yield chunk;
          }
        },
        createWriteStream(tmp, { flush: true }),
      );
    } catch (e) {
      await rm(tmp, { force: true });
      if (e instanceof TooLarge)
        return { ok: false, code: 'payload-too-large', message: `the file is over ${max} bytes` };
      throw e;
    }
    const sha256 = hash.digest('hex');
    if (await this.d.blobs.stat(sha256)) await rm(tmp, { force: true });
    else await this.d.blobs.adopt(sha256, tmp);
    const now = this.d.clock.now();
    const input = {
      publicationId,
      name: req.name,
      fileKind: req.fileKind,
      sha256,
      size,
      sites: sites.sites,
      now,
      ttlS: req.ttlS,
      ...(await this.formsFor(sites.sites, size > 0 ? kept : null, req.inline === true)),
    };
    // The publication is recorded before it is queued: a crash between the two leaves a listed publication
    // still `queued` (visible, re-publishable), never an announced one the hub does not know. Recording
    // it also supersedes earlier publications of the same name and kind, per site, in one transaction.
    const supersedes = await this.d.publications.publish(publicationRow(input));
    const { publication, downlink } = await buildManifests(
      { ...input, supersedes },
      this.d.hubPrivateKey,
      () => this.d.ids.next(),
    );
    await this.d.store.commit({ downlink });
    return { ok: true, publication };
  }
}

class TooLarge extends Error {}
