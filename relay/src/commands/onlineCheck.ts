import { HopClient } from '@driftline/hop/client';
import type { ResolvedUpstream } from '../config.js';

/** What one upstream said to `relay config check --online`. */
export interface OnlineResult {
  name: string;
  url: string;
  ok: boolean;
  /** The peer this relay's token is there, and the sites it acts for (absent when it did not say). */
  peer?: { name: string; sites: string[] };
  /** One line a person reads: what is wrong and what to do, or what worked. */
  line: string;
  /** Something to look at that does not fail the check. */
  warning?: string;
  /** The upstream refused the token (401/403): a credential problem, exit 2 like any in the file. */
  refused?: boolean;
}

/**
 * Asks each upstream whether it answers and takes this relay's token (`GET /v1/peer`), and whether the
 * sites relay.yaml lists are ones the token acts for there. Sequential: one request per upstream.
 */
export async function checkUpstreams(
  relayName: string,
  sites: readonly string[],
  upstreams: readonly ResolvedUpstream[],
  timeoutMs: number,
): Promise<OnlineResult[]> {
  const out: OnlineResult[] = [];
  for (const u of upstreams) {
    const client = new HopClient({ url: u.url, token: u.token, timeoutMs, maxResponseBytes: 1024 * 1024 });
    const at = `upstream ${u.name} (${u.url})`;
    const r = await client.peerInfo();
    if (r.ok) {
      const { name, sites: actsFor } = r.value;
      const missing = actsFor.includes('*') ? [] : sites.filter((s) => !actsFor.includes(s));
      out.push({
        name: u.name,
        url: u.url,
        ok: true,
        peer: r.value,
        line: `${at}: OK, takes the token as peer '${name}', acting for ${actsFor.join(', ') || 'no site'}`,
        ...(missing.length > 0
          ? {
              warning: `${at}: the token does not act for ${missing.join(', ')} of relay.yaml sites; their bundles will be refused there (at the hub: hub peer sites ${name} --sites ${[...new Set([...actsFor, ...missing])].join(',')})`,
            }
          : {}),
      });
      continue;
    }
    let line: string;
    if (r.code === 'unauthorized' || r.status === 401 || r.status === 403) {
      out.push({
        name: u.name,
        url: u.url,
        ok: false,
        refused: true,
        line: `${at}: refuses the token (${r.message}); issue a new one where it runs (at the hub: hub peer rotate ${relayName}, or hub peer add ${relayName} --sites …) and put it in the tokenFile`,
      });
      continue;
    }
    if (r.status === 404) {
      // an upstream from before GET /v1/peer: it answers, but cannot say whether it takes the token
      const probe = await client.probe();
      out.push({
        name: u.name,
        url: u.url,
        ok: probe.ok,
        line: probe.ok
          ? `${at}: answers, but is older than GET /v1/peer, so the token is not checked`
          : `${at}: does not answer /v1/health (${probe.message})`,
      });
      continue;
    } else if (r.code === 'unreachable' || r.code === 'aborted')
      line = `${at}: does not answer (${r.message}); check the URL, that it runs, and the network between`;
    else line = `${at}: answered ${r.status ?? ''} ${r.code}: ${r.message}`.replace(/\s+/g, ' ');
    out.push({ name: u.name, url: u.url, ok: false, line });
  }
  return out;
}
