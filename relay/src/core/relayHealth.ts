import type { RelayStatus } from '@driftline/protocol';
import type { ForwardEvent } from './Forwarder.js';

/** Most sites remembered as refused (the status caps the list at 256). */
const MAX_SITES_REFUSED = 256;

/** The site of a `site/agent` source. */
export const siteOf = (source: string | null): string | null =>
  source ? (source.split('/')[0] ?? null) : null;

/**
 * What the relay knows of its own health, from forwarding events: refusals by code, the sites its
 * upstreams refused because its token does not act for them, and how the last exchange with each
 * upstream went. Sent upstream as a `RelayStatus` (docs/decisions/240-peers-and-relay-health.md).
 */
export class RelayHealth {
  private readonly refusals = new Map<string, number>();
  private readonly sitesRefused = new Set<string>();
  private readonly upstreams = new Map<string, RelayStatus['upstreams'][number]>();

  constructor(upstreamNames: readonly string[]) {
    for (const name of upstreamNames) this.upstreams.set(name, { name, ok: true, code: null, message: null });
  }

  /** Notes one forwarding event; answers the sites newly refused as not this relay's (`forbidden`). */
  note(e: ForwardEvent): string[] {
    if (e.type === 'forwarded' || e.type === 'blob-forwarded')
      this.upstreams.set(e.upstream, { name: e.upstream, ok: true, code: null, message: null });
    else if (e.type === 'failed')
      this.upstreams.set(e.upstream, {
        name: e.upstream,
        ok: false,
        code: e.code.slice(0, 64),
        message: e.reason.slice(0, 500),
      });
    if (e.type !== 'refused') return [];
    const fresh: string[] = [];
    e.receipts.forEach((r, i) => {
      const code = r.code ?? 'unknown';
      this.refusals.set(code, (this.refusals.get(code) ?? 0) + 1);
      const site = siteOf(e.sources[i] ?? null);
      if (
        code === 'forbidden' &&
        site &&
        !this.sitesRefused.has(site) &&
        this.sitesRefused.size < MAX_SITES_REFUSED
      ) {
        this.sitesRefused.add(site);
        fresh.push(site);
      }
    });
    return fresh;
  }

  /** Sites the upstream now accepts are no longer refused. */
  accepted(sites: readonly string[]): void {
    for (const s of sites) this.sitesRefused.delete(s);
  }

  refusedSites(): string[] {
    return [...this.sitesRefused].sort();
  }

  status(input: {
    at: number;
    version: string;
    custody: RelayStatus['custody'];
    sites: string[];
  }): RelayStatus {
    return {
      ...input,
      upstreamRefusals: Object.fromEntries(this.refusals),
      sitesRefused: this.refusedSites(),
      upstreams: [...this.upstreams.values()],
    };
  }
}

/**
 * The sites the relay pulls downlink for: relay.yaml `sites` and what each upstream says this relay's
 * token acts for (`GET /v1/peer`), so the hub's `hub peer sites` is the one list to keep.
 * `*` from upstream means every site, which names none to pull: relay.yaml's list then stays the list.
 */
export function pulledSites(configured: readonly string[], learned: Iterable<readonly string[]>): string[] {
  const out = new Set(configured);
  for (const sites of learned) for (const s of sites) if (s !== '*') out.add(s);
  return [...out].sort();
}

/** The command that lets the relay's token act for `refused` too, as the operator runs it at the hub. */
export function peerSitesFix(peer: string, actsFor: readonly string[], refused: readonly string[]): string {
  const sites = actsFor.includes('*') ? ['*'] : [...new Set([...actsFor, ...refused])].sort();
  return `hub peer sites ${peer} --sites ${sites.join(',')}`;
}
