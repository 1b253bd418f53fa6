import type { RelayInfo, RelayProblem, RelayStatus } from '@driftline/protocol';
import type { PeerRow } from '../ports/HubStore.js';
import { peerLive } from './peers.js';

/** A relay sends its status every minute; past this without one it is `silent`. */
export const SILENT_AFTER_MS = 5 * 60_000;
/** Custody older than this is worth a look (the link may be down for longer by plan; the fix says so). */
export const CUSTODY_OLD_MS = 60 * 60_000;

/** The latest status a relay sent, and when the hub took it (hub clock). */
export interface KeptStatus {
  status: RelayStatus;
  at: number;
}

const ago = (ms: number) =>
  ms >= 3_600_000 ? `${Math.round(ms / 3_600_000)} h` : `${Math.round(ms / 60_000)} min`;

/** What is wrong at one relay, each with the command that fixes it. */
export function relayProblems(
  name: string,
  sites: readonly string[],
  kept: KeptStatus | undefined,
  now: number,
): RelayProblem[] {
  if (!kept) return [];
  const out: RelayProblem[] = [];
  const s = kept.status;
  if (now - kept.at > SILENT_AFTER_MS)
    out.push({
      code: 'silent',
      message: `no status from ${name} for ${ago(now - kept.at)}: the relay is down or its link is`,
      fix: `on the relay: relay config check --online --config relay.yaml`,
    });
  if (s.sitesRefused.length > 0) {
    const all = sites.includes('*') ? ['*'] : [...new Set([...sites, ...s.sitesRefused])].sort();
    out.push({
      code: 'sites-refused',
      message: `${name} forwarded bundles of ${s.sitesRefused.join(', ')}, which its token does not act for; they were refused`,
      fix: `hub peer sites ${name} --sites ${all.join(',')}`,
    });
  }
  for (const u of s.upstreams) {
    if (u.ok) continue;
    const refused = u.code === 'unauthorized';
    out.push({
      code: refused ? 'token-refused' : 'upstream-failing',
      message:
        `upstream '${u.name}' ${refused ? "refuses the relay's token" : 'fails'}: ${u.code ?? ''} ${u.message ?? ''}`.trim(),
      fix: refused
        ? `issue a token where '${u.name}' runs (hub peer rotate ${name}, or relay token add on a relay) and put it in the relay's tokenFile`
        : `on the relay: relay config check --online --config relay.yaml`,
    });
  }
  const other = Object.entries(s.upstreamRefusals).filter(([code, n]) => code !== 'forbidden' && n > 0);
  if (other.length > 0)
    out.push({
      code: 'refusals',
      message: `upstream refused bundles for good: ${other.map(([c, n]) => `${n} ${c}`).join(', ')}`,
      fix: "see the relay's log line 'upstream refused bundles for good' for the bundles and agents; an unknown agent is enrolled with hub enroll",
    });
  if (s.custody.oldestAt !== null && s.at - s.custody.oldestAt > CUSTODY_OLD_MS)
    out.push({
      code: 'custody-old',
      message: `${name} holds ${s.custody.bundles} bundle(s); the oldest for ${ago(s.at - s.custody.oldestAt)}`,
      fix: `on the relay: relay config check --online --config relay.yaml (outside its contact windows this is expected)`,
    });
  return out;
}

/**
 * `/api/relays`: one entry per peer name, with its latest status: one that holds a working token with
 * its problems; one whose every token is revoked with `revokedAt` (the latest) and no problems, kept
 * because its history is audit material (issue 44).
 */
export function relayInfos(peers: readonly PeerRow[], now: number): RelayInfo[] {
  const byName = new Map<string, PeerRow[]>();
  for (const p of peers) byName.set(p.name, [...(byName.get(p.name) ?? []), p]);
  const iso = (t: number | null | undefined) => (t == null ? null : new Date(t).toISOString());
  return [...byName.entries()].map(([name, all]) => {
    const live = all.filter((p) => peerLive(p, now));
    const rows = live.length > 0 ? live : all;
    const sites = rows.at(-1)?.sites ?? [];
    const used = Math.max(0, ...rows.map((r) => r.lastUsedAt ?? 0));
    // the newest status any of its tokens brought (a relay mid-rotation may report with either)
    const latest = rows
      .filter((r) => r.status && r.statusAt != null)
      .sort((a, b) => (b.statusAt ?? 0) - (a.statusAt ?? 0))[0];
    const kept: KeptStatus | undefined = latest?.status
      ? { status: latest.status, at: latest.statusAt ?? 0 }
      : undefined;
    const info: RelayInfo = {
      name,
      sites,
      lastUsedAt: iso(used || null),
      reportedAt: iso(kept?.at),
      status: kept?.status ?? null,
      problems: live.length > 0 ? relayProblems(name, sites, kept, now) : [],
      // an agent posting directly (`site/agent`) signs its own bundles: no relay key to enrol
      unkeyed: !name.includes('/') && !rows.some((r) => r.publicKey),
    };
    if (live.length === 0) info.revokedAt = iso(Math.max(...all.map((r) => r.revokedAt ?? 0)));
    return info;
  });
}
