import { Ticker } from '@driftline/hop/timing';
import type { Logger } from 'pino';
import type { RelayConfig } from '../config.js';
import type { UpstreamSlot } from '../core/Forwarder.js';
import { watchStep } from '../core/watchStep.js';
import type { DownlinkCustody } from '../ports/Custody.js';
import type { UpstreamPeers } from '../upstreamPeers.js';
import { PEER_REFRESH_MS } from '../upstreamPeers.js';

/**
 * One downlink watch loop per upstream that holds watches (a hub, which says so with `watchS`): the relay's
 * sites are pulled from it when it has something for them, not every `pullIntervalMs`
 * (docs/decisions/620-one-watch-for-all-sites.md). `watched` tells the pull loop which upstreams it
 * leaves to these; one that answers 404 goes back to it (`onUnsupported`) until the next peer beat.
 */
export function downlinkWatches(
  cfg: RelayConfig,
  d: {
    custody: Pick<DownlinkCustody, 'upstreamCursor'>;
    slots: UpstreamSlot[];
    peers: Pick<UpstreamPeers, 'watchS' | 'sites'>;
    now: () => number;
    log: Logger;
  },
  pull: (from: UpstreamSlot[], sites: readonly string[]) => Promise<number>,
) {
  const unsupported = new Set<string>();
  const refusedSaid = new Map<string, string>();
  /** Upstreams whose last watch was a false alarm (told once per streak). */
  const alarms = new Set<string>();
  const stops = new AbortController();
  /** Each upstream's watch in flight, let go when the relay's sites change. */
  const rounds = new Map<string, AbortController>();
  const offered = (slot: UpstreamSlot) => {
    const theirs = d.peers.watchS(slot.upstream.name) ?? 0;
    return cfg.forward.watchS > 0 && theirs > 0 && slot.upstream.watchDownlink !== undefined
      ? Math.min(cfg.forward.watchS, theirs)
      : 0;
  };
  const watched = (slot: UpstreamSlot) => offered(slot) > 0 && !unsupported.has(slot.upstream.name);
  const api = {
    watched,
    onUnsupported: (): void => {},
    kick(): void {
      unsupported.clear();
      for (const t of tickers) t.kick();
    },
    /** The relay's sites changed: every held watch names the old ones, so each is let go and asked again. */
    sitesChanged(): void {
      for (const r of rounds.values()) r.abort();
    },
    start(): void {
      for (const t of tickers) t.start();
    },
    async stop(): Promise<void> {
      stops.abort();
      await Promise.all(tickers.map((t) => t.stop()));
    },
  };
  const tickers = d.slots.map(
    (slot) =>
      new Ticker({
        step: async () => {
          const waitS = offered(slot);
          if (waitS === 0 || unsupported.has(slot.upstream.name)) return PEER_REFRESH_MS;
          const name = slot.upstream.name;
          const round = new AbortController();
          rounds.set(name, round);
          const o = await watchStep({
            custody: d.custody,
            slot,
            sites: d.peers.sites(),
            now: d.now,
            waitS,
            signal: AbortSignal.any([stops.signal, round.signal]),
            pull: (sites) => pull([slot], sites),
          }).finally(() => rounds.delete(name));
          switch (o.kind) {
            case 'pulled':
            case 'quiet': {
              const said = o.refused.join(',');
              if (said !== (refusedSaid.get(name) ?? '')) {
                refusedSaid.set(name, said);
                if (o.refused.length > 0)
                  d.log.warn(
                    { upstream: name, sites: o.refused.slice(0, 20), n: o.refused.length },
                    'upstream refuses to let this relay pull downlink for these sites (its token does not act for them): see `hub peer sites` there',
                  );
              }
              // a false alarm (named sites had nothing; a hold let go early) rests as the pull loop would
              const falseAlarm = o.kind === 'pulled' ? o.taken === 0 : o.early;
              if (!falseAlarm) {
                alarms.delete(name);
                return 0;
              }
              if (!alarms.has(name))
                d.log.warn(
                  { upstream: name, outcome: o.kind },
                  'downlink watch answered with nothing to pull; watching again after the pull interval',
                );
              alarms.add(name);
              return cfg.forward.pullIntervalMs;
            }
            case 'closed':
              return o.wakeAt === null ? cfg.forward.pullIntervalMs : Math.max(0, o.wakeAt - d.now());
            case 'failed':
              d.log.warn(
                { upstream: name, reason: o.reason },
                'downlink watch failed; pulled every site instead',
              );
              return cfg.forward.pullIntervalMs;
            case 'unsupported':
              unsupported.add(name);
              api.onUnsupported();
              return PEER_REFRESH_MS;
          }
        },
        restMs: cfg.forward.pullIntervalMs,
        onError: (err) => void d.log.error({ err }, 'downlink watch step failed'),
      }),
  );
  return api;
}
