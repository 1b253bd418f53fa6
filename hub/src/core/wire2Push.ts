import { actsFor, pushBundleId, pushDelta, wire2KeyId } from '@driftline/hop';
import {
  type BundleHeader,
  type BundleId,
  docId as docIdFor,
  publicKeyRaw,
  wire2,
} from '@driftline/protocol';
import type { AgentRow } from '../ports/HubStore.js';
import { type KeyCache, refuse, type Verified } from './verify.js';

/** Most bytes a push's changes inflate to (v1's batch cap). */
const MAX_CHANGES = 8 * 1024 * 1024;
/** A short id not found makes the directory read the agents again at most this often. */
const REFRESH_MS = 5_000;

/**
 * Which enrolled agent a hop v2 short id is (docs/decisions/495-hop-v2-on-the-agent-link.md): the id is
 * the first 4 bytes of the sha256 of the agent's key, so the hub finds it from the keys it enrolled. Read
 * from the store when an id is not known, at most every {@link REFRESH_MS}.
 */
export class Wire2Directory {
  private byId = new Map<number, { site: string; agent: string }[]>();
  private readAt = Number.NEGATIVE_INFINITY;
  private reading: Promise<void> | null = null;

  constructor(
    private readonly agents: () => Promise<
      readonly Pick<AgentRow, 'site' | 'agent' | 'publicKey' | 'revokedAt'>[]
    >,
    private readonly keys: KeyCache,
    private readonly now: () => number,
  ) {}

  /**
   * The enrolled, unrevoked agents whose key has this short id: one, or (two keys sharing 32 bits of
   * hash) a few, each tried by its signature. Empty: none (read again at most every {@link REFRESH_MS}).
   */
  async resolve(from: number): Promise<readonly { site: string; agent: string }[]> {
    const known = this.byId.get(from);
    if (known) return known;
    if (this.now() - this.readAt >= REFRESH_MS) {
      this.reading ??= this.read().finally(() => {
        this.reading = null;
      });
      await this.reading;
    }
    return this.byId.get(from) ?? [];
  }

  private async read(): Promise<void> {
    this.readAt = this.now();
    const next = new Map<number, { site: string; agent: string }[]>();
    for (const a of await this.agents()) {
      if (a.revokedAt !== null) continue;
      try {
        const id = wire2KeyId(await publicKeyRaw(await this.keys.get(a.publicKey)));
        next.set(id, [...(next.get(id) ?? []), { site: a.site, agent: a.agent }]);
      } catch {
        // a key the hub cannot read is no v2 sender
      }
    }
    this.byId = next;
  }
}

/**
 * Checks a hop v2 push as `verifyDocDelta` checks a v1 doc-delta (S4): from an enrolled, unrevoked agent,
 * signed by its key, for a site the posting peer acts for (`scope`). Answers the delta in v1's shape, its
 * header made from the message (its id from the signature, `created` its send time), so dedupe, merge and
 * acks go on as for v1.
 */
export async function verifyWire2Push(
  bytes: Uint8Array,
  directory: Wire2Directory,
  lookup: (site: string, agent: string) => Promise<AgentRow | null>,
  keys: KeyCache,
  now: number,
  scope?: readonly string[],
): Promise<Verified> {
  const d = wire2.decodeMessage(bytes);
  if (!d.ok) return refuse(null, d.error.code, d.error.message);
  const m = d.value;
  if (m.kind !== 'push') return refuse(null, 'wrong-kind', `the hub takes v2 pushes upstream, not ${m.kind}`);
  const body = m.body as wire2.PushBody;
  const id = pushBundleId(body.t0, m.signature) as BundleId;
  const candidates = await directory.resolve(m.from);
  if (candidates.length === 0)
    return refuse(id, 'unknown-agent', `no enrolled, unrevoked agent has short id ${m.from}`);
  // the agent whose key signed it (two keys may share a short id: each is tried)
  let who: { site: string; agent: string } | null = null;
  let agent: AgentRow | null = null;
  for (const c of candidates) {
    const row = await lookup(c.site, c.agent);
    if (!row || row.revokedAt !== null) continue;
    if (await wire2.verifyMessage(m, await keys.get(row.publicKey))) {
      who = c;
      agent = row;
      break;
    }
  }
  if (!who || !agent)
    return refuse(
      id,
      'bad-signature',
      `the push does not verify with the key enrolled for short id ${m.from} (altered on the way, or not that agent's)`,
      candidates[0] ?? null,
    );
  if (scope && !actsFor({ sites: scope }, who.site))
    return refuse(id, 'agent-mismatch', `the posting peer does not act for site '${who.site}'`, who);
  const delta = pushDelta(body, MAX_CHANGES);
  if (!delta.ok) return refuse(id, 'bad-bundle', `v2 push: ${delta.reason}`, who);
  const doc = docIdFor(who.site, who.agent, body.epoch);
  const header: BundleHeader = {
    id,
    kind: 'doc-delta',
    source: { site: who.site, agent: who.agent } as never,
    destination: 'hub',
    created: body.t0 ?? now,
    lifetimeS: 30 * 86_400,
    priority: delta.value.priority,
    doc,
    heads: [],
  };
  const { changes, blobs, sealed, epoch, heartbeat } = delta.value;
  return {
    ok: true,
    bundle: {
      version: 2,
      header,
      payload: new Uint8Array(0),
      signature: m.signature,
      signed: m.signed,
      bytes,
    },
    payload: { epoch, changes, blobs, ...(sealed ? { sealed } : {}) },
    agent,
    doc: { id: doc, site: who.site, agent: who.agent, epoch },
    wire2: {
      from: m.from,
      seq: m.seq,
      tip: await wire2.messageTip(m.signature),
      ...(body.ackLater ? { ackLaterS: body.ackLater } : {}),
    },
    ...(heartbeat ? { heartbeat } : {}),
  };
}
