/**
 * A downstream peer, identified by its token: what authentication yields and what both the wire v1
 * port (`HopBackend.ts`) and the wire v2 port (`Wire2Backend.ts`) take, so it lives apart from either.
 */
export interface Peer {
  /** The site (or downstream relay) the token was issued for. */
  name: string;
  /**
   * Sites this peer acts for (S4 in docs/architecture.md#invariants): it may post only bundles whose source is one of them and
   * pull downlink only for them; `*` for any.
   */
  sites: readonly string[];
}
