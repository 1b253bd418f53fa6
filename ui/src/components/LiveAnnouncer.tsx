import { useEffect, useRef, useState } from 'preact/hooks';
import { announcementFor, summarise } from '../core/announce.js';
import type { LiveState } from '../ports/LiveEvents.js';
import { useServices } from '../services.js';

const STATE_TEXT: Record<LiveState, string> = {
  connecting: 'connecting…',
  live: 'live',
  reconnecting: 'connection lost — reconnecting…',
  'signed-out': 'not live — signed out',
  closed: 'not live',
};

/** The live indicator, and a polite `role="status"` region that announces bursts of updates once. */
export function LiveAnnouncer() {
  const { live, clock } = useServices();
  const [state, setState] = useState<LiveState>(live.state());
  const [message, setMessage] = useState('');
  const pending = useRef<string[]>([]);
  const flushTimer = useRef<(() => void) | null>(null);

  useEffect(() => {
    const offState = live.onState((s) => setState(s));
    setState(live.state());
    const offEvents = live.subscribe((e) => {
      const text = announcementFor(e);
      if (!text) return;
      pending.current.push(text);
      if (flushTimer.current) return;
      flushTimer.current = clock.after(1000, () => {
        flushTimer.current = null;
        setMessage(summarise(pending.current));
        pending.current = [];
      });
    });
    return () => {
      offState();
      offEvents();
      flushTimer.current?.();
    };
  }, [live, clock]);

  return (
    <>
      <span class={`live live-${state}`} title="updates from the hub">
        <span aria-hidden="true">●</span> {STATE_TEXT[state]}
      </span>
      <div role="status" aria-live="polite" class="sr-only" data-testid="announcer">
        {message}
      </div>
    </>
  );
}
