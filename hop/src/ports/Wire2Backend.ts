import type { wire2 } from '@driftline/protocol';
import type { Peer } from './Peer.js';

/** The agent behind a hop v2 short id, as this node knows it. */
export interface Wire2Sender {
  /** The peer it acts as here (its bearer token's, at registration): its sites bound what it may send and pull. */
  peer: Peer;
  site: string;
  agent: string;
  /** The key its messages are signed with. */
  key: CryptoKey;
}

/**
 * What a node needs to serve hop v2 (`POST /v2`, `POST /v1/peer/wire2`,
 * docs/decisions/495-hop-v2-on-the-agent-link.md). A push is taken by the node's `accept`, a pull read
 * from its `downlink`: this adds only who a short id is and the node's signature on its answers.
 */
export interface Wire2Backend {
  /**
   * Whether it speaks v2 now (a relay: while its upstreams do): false refuses v2 (404), undefined means
   * not known yet (registration answers 503: ask again soon); absent: always.
   */
  speaking?(): boolean | undefined;
  /**
   * The hub's v2 messages besides acks this node carries down to its sites (`['publication']`,
   * docs/decisions/505-compact-publications.md): the hub all it sends; a relay what every upstream carries.
   * Absent: none.
   */
  carries?(): readonly string[];
  /**
   * The compact push forms every node from here to the hub reads (`['blob-list', 'changes-dz1']`,
   * docs/decisions/510-compact-blob-announcements.md): the hub all it reads; a relay those every upstream
   * states that it reads too. Absent: none.
   */
  pushForms?(): readonly string[];
  /** This node's short id, `to` of the pulls it serves (0: the hub). */
  readonly nodeId: number;
  /**
   * Takes an agent's key for `peer` (the bearer token's): a relay pins it, the hub checks it is the key
   * it enrolled. Throws `WireError` naming what is wrong; answers the agent's short id.
   */
  register(peer: Peer, registration: wire2.Wire2Registration): Promise<number>;
  /** The agent behind a short id, with the peer it acts as; null: unknown here, or its token revoked. */
  sender(from: number): Promise<Wire2Sender | null>;
  /** Signs this node's answers (custody) with its key. */
  sign(data: Uint8Array): Uint8Array | Promise<Uint8Array>;
}
