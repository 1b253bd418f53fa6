import { SiteIdSchema } from '@driftline/protocol';
import type { PeerRow, PeopleStore } from '../ports/HubStore.js';
import { cliAudit } from './users.js';

/** A peer name: a relay's `name`, or `site/agent` for an agent talking to the hub directly. */
const PEER_NAME = /^[A-Za-z0-9][A-Za-z0-9._/-]{0,127}$/;

export type PeerResult<T = object> = ({ ok: true } & T) | { ok: false; error: string };

/** Whether a peer token still authenticates at `now` (a rotated-out one does until its grace ends). */
export const peerLive = (p: PeerRow, now: number): boolean => p.revokedAt == null || p.revokedAt > now;

/** `active`, `expiring` (a rotated-out token within its grace period) or `revoked`. */
export function peerState(p: PeerRow, now: number): 'active' | 'expiring' | 'revoked' {
  if (p.revokedAt == null) return 'active';
  return p.revokedAt > now ? 'expiring' : 'revoked';
}

/** By name, then oldest token first (rows without a date first). */
export function sortPeers(rows: PeerRow[]): PeerRow[] {
  return rows.sort(
    (a, b) =>
      (a.name < b.name ? -1 : a.name > b.name ? 1 : 0) ||
      (a.createdAt ?? 0) - (b.createdAt ?? 0) ||
      (a.tokenSha256 < b.tokenSha256 ? -1 : 1),
  );
}

/** Parses `--sites`: comma-separated site ids, or `*` alone for every site. */
export function parsePeerSites(text: string): PeerResult<{ sites: string[] }> {
  const sites = [...new Set(text.split(',').map((s) => s.trim()))].filter(Boolean);
  if (sites.length === 0)
    return { ok: false, error: "--sites: name at least one site, or '*' for every site" };
  if (sites.includes('*') && sites.length > 1)
    return { ok: false, error: "--sites: '*' already means every site; give it alone" };
  const bad = sites.find((s) => s !== '*' && !SiteIdSchema.safeParse(s).success);
  if (bad !== undefined)
    return { ok: false, error: `--sites: '${bad.slice(0, 64)}' is not a site id (letters, digits, - and _)` };
  return { ok: true, sites };
}

const live = async (store: PeopleStore, name: string, now: number) =>
  (await store.listPeers()).filter((p) => p.name === name && peerLive(p, now));

/** A new peer with its first token (stored hashed). A name that holds a working token is refused. */
export async function addPeer(
  store: PeopleStore,
  input: { name: string; sites: string[]; tokenSha256: string; publicKey?: string | null },
  now: number,
): Promise<PeerResult<{ peer: PeerRow }>> {
  if (!PEER_NAME.test(input.name))
    return {
      ok: false,
      error: `'${input.name.slice(0, 128)}' is not a peer name (letters, digits and . _ / -, up to 128 characters)`,
    };
  if ((await live(store, input.name, now)).length > 0)
    return {
      ok: false,
      error: `peer '${input.name}' exists; issue it a new token with \`hub peer rotate ${input.name}\`, or revoke it first (\`hub peer revoke ${input.name}\`)`,
    };
  const peer: PeerRow = { ...input, createdAt: now, lastUsedAt: null, revokedAt: null };
  await store.commit({
    peers: [peer],
    audit: [
      cliAudit(
        'peer.add',
        input.name,
        now,
        'ok',
        `sites ${input.sites.join(',')}${input.publicKey ? `, key ${input.publicKey}` : ''}`,
      ),
    ],
  });
  return { ok: true, peer };
}

const noPeer = (name: string) => ({
  ok: false as const,
  error: `peer '${name}' has no working token (see hub peer list; add one with hub peer add ${name} --sites …)`,
});

/** Every working token of the peer stops working now. */
export async function revokePeer(
  store: PeopleStore,
  name: string,
  now: number,
): Promise<PeerResult<{ tokens: number }>> {
  const rows = await live(store, name, now);
  if (rows.length === 0) return noPeer(name);
  await store.commit({
    peers: rows.map((p) => ({ ...p, revokedAt: now })),
    audit: [cliAudit('peer.revoke', name, now, 'ok', `${rows.length} token(s)`)],
  });
  return { ok: true, tokens: rows.length };
}

/**
 * A new token for the peer, with the sites it has; its older tokens stop working after `graceMs`
 * (0: at once), so the operator can replace the token file before the old one is refused.
 */
export async function rotatePeer(
  store: PeopleStore,
  input: { name: string; tokenSha256: string; graceMs: number; publicKey?: string | null },
  now: number,
): Promise<PeerResult<{ peer: PeerRow; oldUntil: number }>> {
  const rows = await live(store, input.name, now);
  const newest = rows.at(-1);
  if (!newest) return noPeer(input.name);
  const oldUntil = now + input.graceMs;
  const peer: PeerRow = {
    tokenSha256: input.tokenSha256,
    name: input.name,
    sites: newest.sites,
    // a new key when given (the relay's key was replaced), else the one it had
    publicKey: input.publicKey ?? newest.publicKey ?? null,
    createdAt: now,
    lastUsedAt: null,
    revokedAt: null,
  };
  await store.commit({
    peers: [...rows.map((p) => ({ ...p, revokedAt: Math.min(p.revokedAt ?? oldUntil, oldUntil) })), peer],
    audit: [
      cliAudit(
        'peer.rotate',
        input.name,
        now,
        'ok',
        `old token(s) work until ${new Date(oldUntil).toISOString()}`,
      ),
    ],
  });
  return { ok: true, peer, oldUntil };
}

/** Sets the sites every working token of the peer acts for (the relay learns them from the hub). */
export async function setPeerSites(
  store: PeopleStore,
  name: string,
  sites: string[],
  now: number,
): Promise<PeerResult<{ before: string[] }>> {
  const rows = await live(store, name, now);
  const before = rows.at(-1)?.sites;
  if (!before) return noPeer(name);
  await store.commit({
    peers: rows.map((p) => ({ ...p, sites })),
    audit: [cliAudit('peer.sites', name, now, 'ok', `sites ${before.join(',')} -> ${sites.join(',')}`)],
  });
  return { ok: true, before };
}
