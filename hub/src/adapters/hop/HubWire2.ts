import { type Peer, type Wire2Backend, type Wire2Sender, wire2KeyId } from '@driftline/hop';
import { type KeyCache, publicKeyRaw, signBytes, WireError, wire2 } from '@driftline/protocol';
import type { Wire2Directory } from '../../core/wire2Push.js';
import type { AgentRow } from '../../ports/HubStore.js';

/**
 * Hop v2 at the hub, for an agent that posts to it directly (docs/decisions/495-hop-v2-on-the-agent-link.md):
 * the key an agent registers must be the one the hub enrolled for it; its short id is found from the keys
 * the hub enrolled, and it acts for its own site only. The hub is node 0.
 */
export class HubWire2 implements Wire2Backend {
  readonly nodeId = 0;

  /**
   * The hub sends compact publication manifests (decision 505), with a git bundle's heads packed (decision
   * 520), to sites whose agents read them.
   */
  carries(): readonly string[] {
    return wire2.CARRIED;
  }

  /** The hub reads every compact push form (decision 510). */
  pushForms(): readonly string[] {
    return wire2.PUSH_FORMS;
  }

  constructor(
    private readonly d: {
      directory: Wire2Directory;
      keys: KeyCache;
      getAgent(site: string, agent: string): Promise<AgentRow | null>;
      hubPrivateKey: CryptoKey;
    },
  ) {}

  async register(_peer: Peer, r: wire2.Wire2Registration): Promise<number> {
    const row = await this.d.getAgent(r.site, r.agent);
    if (!row || row.revokedAt !== null)
      throw new WireError(
        'unknown-agent',
        `agent '${r.site}/${r.agent}' is not enrolled here (or was revoked)`,
      );
    const [enrolled, named] = await Promise.all([
      this.d.keys.get(row.publicKey).then(publicKeyRaw),
      this.d.keys
        .get(r.publicKey)
        .then(publicKeyRaw)
        .catch(() => null),
    ]);
    if (!named || Buffer.compare(Buffer.from(enrolled), Buffer.from(named)) !== 0)
      throw new WireError('forbidden', `that is not the key enrolled for agent '${r.site}/${r.agent}'`);
    const id = wire2KeyId(enrolled);
    const holders = await this.d.directory.resolve(id);
    if (holders.some((h) => h.site !== r.site || h.agent !== r.agent))
      throw new WireError(
        'conflict',
        `another enrolled agent's key has the same short id ${id}: this agent speaks hop v1 to the hub (or re-enrol it with a new key)`,
      );
    return id;
  }

  async sender(from: number): Promise<Wire2Sender | null> {
    // two keys sharing a short id: the hub cannot tell which signed before it checks; it takes the one
    // registered (`register` refuses a second agent with the id)
    const [who, ...more] = await this.d.directory.resolve(from);
    if (!who || more.length > 0) return null;
    const row = await this.d.getAgent(who.site, who.agent);
    if (!row || row.revokedAt !== null) return null;
    const peer: Peer = { name: `${who.site}/${who.agent}`, sites: [who.site] };
    return { peer, site: who.site, agent: who.agent, key: await this.d.keys.get(row.publicKey) };
  }

  sign(data: Uint8Array): Promise<Uint8Array> {
    return signBytes(this.d.hubPrivateKey, data);
  }
}
