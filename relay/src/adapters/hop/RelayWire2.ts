import {
  actsFor,
  type Peer,
  RetryLaterError,
  type Wire2Backend,
  type Wire2Sender,
  wire2KeyId,
} from '@driftline/hop';
import { KeyCache, publicKeyRaw, WireError, type wire2 } from '@driftline/protocol';
import type { RelayKey } from '../fs/relayKey.js';
import type { SqliteTokens } from '../sqlite/SqliteTokens.js';

/**
 * Hop v2 at a relay (docs/decisions/495-hop-v2-on-the-agent-link.md): an agent registers its key with its
 * site's bearer token, once; from then on its signed messages are its credential. A key acts as the peer
 * that registered it, for as long as that peer has a live token: `relay token revoke` cuts its messages too.
 */
export class RelayWire2 implements Wire2Backend {
  private readonly keys = new KeyCache();

  constructor(
    readonly nodeId: number,
    private readonly tokens: SqliteTokens,
    private readonly key: RelayKey,
    /** Whether every upstream speaks v2 (undefined: not known yet); a v2 push goes only to one that does. */
    private readonly upstreamsSpeak: () => boolean | undefined,
    /** The hub's v2 messages every upstream carries down (decision 505): this relay carries them on. */
    private readonly upstreamsCarry: () => readonly string[] = () => [],
    /** The compact push forms every upstream reads that this relay reads too (decision 510). */
    private readonly upstreamsPushForms: () => readonly string[] = () => [],
  ) {}

  speaking(): boolean | undefined {
    return this.upstreamsSpeak();
  }

  carries(): readonly string[] {
    return this.upstreamsCarry();
  }

  pushForms(): readonly string[] {
    return this.upstreamsPushForms();
  }

  async register(peer: Peer, r: wire2.Wire2Registration): Promise<number> {
    const upstream = this.upstreamsSpeak();
    // an older hub would refuse the pushes this relay carried: the agent speaks v1 here (asked again in a day)
    if (upstream === false)
      throw new WireError(
        'not-found',
        'this relay speaks hop v2 only when its upstreams do, and one does not yet',
      );
    if (upstream === undefined)
      throw new RetryLaterError(
        'unavailable',
        'this relay has not heard from its upstreams yet; register again soon',
        30,
      );
    const id = wire2KeyId(await publicKeyRaw(await this.cryptoKey(r.publicKey)));
    const pinned = this.tokens.pinWire2(id, {
      publicKey: r.publicKey,
      peer: peer.name,
      site: r.site,
      agent: r.agent,
    });
    if (!pinned)
      throw new WireError(
        'conflict',
        `short id ${id} is registered here for another key or another peer; an agent's key is registered by its own site's token`,
      );
    return id;
  }

  async sender(from: number): Promise<Wire2Sender | null> {
    const k = this.tokens.wire2Key(from);
    if (!k) return null;
    const peer = this.tokens.peerNamed(k.peer);
    if (!peer || !actsFor(peer, k.site)) return null;
    return { peer, site: k.site, agent: k.agent, key: await this.cryptoKey(k.publicKey) };
  }

  sign(data: Uint8Array): Uint8Array {
    return this.key.sign(data);
  }

  private cryptoKey(text: string): Promise<CryptoKey> {
    return this.keys.get(text).catch(() => {
      throw new WireError('bad-request', `publicKey '${text.slice(0, 60)}' is not an ed25519:… key`);
    });
  }
}
