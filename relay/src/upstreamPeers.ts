import type { HopClient } from '@driftline/hop/client';
import { type PeerInfo, type RelayStatus, wire2 } from '@driftline/protocol';
import type { Logger } from 'pino';
import type { ForwardEvent } from './core/Forwarder.js';
import { peerSitesFix, pulledSites, RelayHealth } from './core/relayHealth.js';
import type { CustodyStats } from './ports/Custody.js';

/** How often the relay asks each upstream who it is there, and sends its own status, ms. */
export const PEER_REFRESH_MS = 60_000;
/** A refusal asks again at once, but not more often than this, ms. */
const REFUSAL_REFRESH_MS = 2_000;

/**
 * What this relay is at each upstream (`GET /v1/peer`: its name and the sites its token acts for) and
 * its own health, which it reports there (`POST /v1/status`). The sites learned widen the downlink the
 * relay pulls (`sites()`), so adding a site behind a relay is `hub peer sites` alone
 * (docs/decisions/240-peers-and-relay-health.md).
 */
export class UpstreamPeers {
  readonly health: RelayHealth;
  private readonly learned = new Map<string, PeerInfo>();
  /** The last refresh or report outcome logged per upstream, so a lasting state is logged once. */
  private readonly said = new Map<string, string>();
  private lastRefreshAt = 0;
  /** Hears that the sites this relay pulls changed (a held downlink watch names the old ones: decision 620). */
  onSitesChanged: () => void = () => {};
  /** Upstreams whose status answer says who this relay is there: no `GET /v1/peer` a minute for them. */
  private readonly statusTells = new Set<string>();

  constructor(
    private readonly d: {
      configured: readonly string[];
      upstreams: readonly { name: string; client: HopClient }[];
      custody: CustodyStats;
      version: string;
      now: () => number;
      log: Logger;
    },
  ) {
    this.health = new RelayHealth(d.upstreams.map((u) => u.name));
  }

  /** The sites whose downlink the relay pulls: relay.yaml's and those upstream says it acts for. */
  sites(): string[] {
    return pulledSites(
      this.d.configured,
      [...this.learned.values()].map((p) => p.sites),
    );
  }

  /**
   * The longest `upstream` holds a downlink watch (`watchS` of its peer answer, decision 620), seconds;
   * undefined while it has not answered, or holds none (a relay, an older hub).
   */
  watchS(upstream: string): number | undefined {
    return this.learned.get(upstream)?.watchS;
  }

  /**
   * Whether every upstream said it speaks hop v2 (`wire` in `GET /v1/peer`): true, false (one said it
   * does not: an older hub or relay), or undefined while one has not answered yet (decision 495).
   */
  upstreamsSpeakWire2(): boolean | undefined {
    let unknown = false;
    for (const u of this.d.upstreams) {
      const p = this.learned.get(u.name);
      if (!p) unknown = true;
      else if (!p.wire?.includes(2)) return false;
    }
    return unknown ? undefined : true;
  }

  /**
   * The hub's v2 messages (besides acks) every upstream says it carries down (`carries` in `GET /v1/peer`,
   * decision 505) that this relay carries too: none while one has not answered, or is older.
   */
  upstreamsCarry(): string[] {
    return this.everyUpstreamSays((p) => p.carries).filter((c) => wire2.CARRIED.includes(c));
  }

  /**
   * The compact push forms every upstream reads (`pushForms`, decision 510) that this relay reads too (it
   * decodes each push it carries): none while one has not answered, or is older.
   */
  upstreamsPushForms(): string[] {
    return this.everyUpstreamSays((p) => p.pushForms).filter((f) => wire2.PUSH_FORMS.includes(f));
  }

  /** The names every upstream's peer answer lists under `field`. */
  private everyUpstreamSays(field: (p: PeerInfo) => readonly string[] | undefined): string[] {
    let common: string[] | null = null;
    for (const u of this.d.upstreams) {
      const learned = this.learned.get(u.name);
      const said = learned ? (field(learned) ?? []) : [];
      common = common === null ? [...said] : common.filter((c) => said.includes(c));
    }
    return common ?? [];
  }

  /** What upstream `name` says this relay is there; undefined before it answered. */
  peerAt(name: string): PeerInfo | undefined {
    return this.learned.get(name);
  }

  private once(key: string, value: string, log: () => void): void {
    if (this.said.get(key) === value) return;
    this.said.set(key, value);
    log();
  }

  /**
   * The minute's look upstream (the peering loop): this relay's status sent to every upstream, whose answer
   * says who the relay is there (a hub since docs/decisions/610-status-answers-who-you-are.md); an upstream
   * that has not said so yet, or does not (an older hub, a relay), is asked first with `GET /v1/peer`.
   */
  async beat(): Promise<void> {
    const ask = this.d.upstreams.filter((u) => !this.statusTells.has(u.name) || !this.learned.has(u.name));
    if (ask.length > 0) await this.refresh(ask);
    else this.lastRefreshAt = this.d.now();
    await this.report();
  }

  /** Asks each upstream (every one by default) who this relay's token is there. */
  async refresh(upstreams = this.d.upstreams): Promise<void> {
    this.lastRefreshAt = this.d.now();
    for (const u of upstreams) {
      const r = await u.client.peerInfo();
      if (r.ok) this.learn(u.name, r.value);
      else if (r.code === 'unauthorized')
        this.once(`peer:${u.name}`, r.code, () =>
          this.d.log.error(
            { upstream: u.name, code: r.code, reason: r.message },
            `upstream '${u.name}' refuses this relay's token: put a working one in its tokenFile (at the hub: hub peer rotate <relay name>); the file is re-read without a restart`,
          ),
        );
      // any other failure is the link's: forwarding logs and backs off for it
    }
  }

  /** What upstream `name` said this relay is there (its peer answer, or its status answer). */
  private learn(name: string, info: PeerInfo): void {
    const before = this.sites();
    this.learned.set(name, info);
    this.health.accepted(info.sites.includes('*') ? this.health.refusedSites() : info.sites);
    const after = this.sites();
    if (after.join('\n') !== before.join('\n')) this.onSitesChanged();
    const notHere = info.sites.includes('*') ? [] : this.d.configured.filter((s) => !info.sites.includes(s));
    if (notHere.length > 0)
      this.once(`sites:${name}`, notHere.join(','), () =>
        this.d.log.warn(
          { upstream: name, sites: notHere, actsFor: info.sites },
          `relay.yaml sites ${notHere.join(', ')} are not this relay's at upstream '${name}': their bundles and downlink are refused there; at the hub run \`${peerSitesFix(info.name, info.sites, notHere)}\``,
        ),
      );
    this.once(`peer:${name}`, JSON.stringify(info), () =>
      this.d.log.info(
        { upstream: name, peer: info.name, actsFor: info.sites, pulls: after, before },
        'upstream says which sites this relay acts for; pulling their downlink',
      ),
    );
  }

  /** Sees each forwarding event: a site refused as not this relay's asks upstream again and says what fixes it. */
  async note(e: ForwardEvent): Promise<void> {
    const fresh = this.health.note(e);
    const due = this.d.now() - this.lastRefreshAt >= REFUSAL_REFRESH_MS;
    // a site refused before may be the relay's now (`hub peer sites`): ask, so its downlink is pulled soon
    if (e.type === 'forwarded' && due && this.health.refusedSites().length > 0) {
      const had = this.health.refusedSites().length;
      await this.refresh();
      // headquarters sees the fix took at once, not at the next minute's report
      if (this.health.refusedSites().length < had) await this.report();
      return;
    }
    if (e.type !== 'refused' || fresh.length === 0) return;
    if (due) await this.refresh();
    const peer = this.learned.get(e.upstream);
    const still = fresh.filter((s) => this.health.refusedSites().includes(s));
    if (still.length === 0) return;
    const fix = peer ? peerSitesFix(peer.name, peer.sites, still) : 'hub peer sites <relay name> --sites …';
    this.d.log.warn(
      { upstream: e.upstream, sites: still, actsFor: peer?.sites ?? null },
      `upstream '${e.upstream}' refused bundles of ${still.join(', ')}: this relay's token there does not act for them; at the hub run \`${fix}\` (relay.yaml sites need no change)`,
    );
    await this.report();
  }

  /** This relay's status as it is sent upstream. */
  status(): RelayStatus {
    const now = this.d.now();
    const queues = this.d.custody.queueStats(now).filter((q) => q.dest === 'hub');
    const bundles = queues.reduce((n, q) => n + q.count, 0);
    const oldestMs = Math.max(0, ...queues.map((q) => q.oldestMs));
    return this.health.status({
      at: now,
      version: this.d.version,
      custody: {
        bundles,
        bytes: this.d.custody.usage().total,
        oldestAt: bundles > 0 ? now - oldestMs : null,
      },
      sites: this.sites(),
    });
  }

  /** Sends the status to every upstream; a failure is logged once until it changes. */
  async report(): Promise<void> {
    const status = this.status();
    for (const u of this.d.upstreams) {
      const r = await u.client.postStatus(status);
      if (r.ok && r.value) {
        this.statusTells.add(u.name);
        this.learn(u.name, r.value);
      } else if (r.ok) this.statusTells.delete(u.name);
      const outcome = r.ok ? 'ok' : r.code;
      this.once(`status:${u.name}`, outcome, () => {
        if (!r.ok && r.code !== 'not-found')
          this.d.log.warn(
            { upstream: u.name, code: r.code, reason: r.message },
            "could not report this relay's status upstream",
          );
      });
    }
  }
}
