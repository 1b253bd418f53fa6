import { useEffect, useState } from 'preact/hooks';
import { concernsSite } from '../core/siteEvent.js';
import { useServices } from '../services.js';

/**
 * A number that grows when the live stream says something about `site`, at most once per `settleMs`
 * (events of one ingest come together: one re-read for them all). Views put it in their loads' deps, so
 * a run's approvals and apply state follow the site without a reload (issue 44).
 */
export function useSiteEvents(site: string, settleMs = 500): number {
  const { live, clock } = useServices();
  const [round, setRound] = useState(0);
  useEffect(() => {
    let cancel: (() => void) | null = null;
    const off = live.subscribe((e) => {
      if (cancel || !concernsSite(e, site)) return;
      cancel = clock.after(settleMs, () => {
        cancel = null;
        setRound((n) => n + 1);
      });
    });
    return () => {
      off();
      cancel?.();
    };
  }, [live, clock, site, settleMs]);
  return round;
}
