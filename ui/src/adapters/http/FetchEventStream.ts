import { API_PATHS, type HubEvent, HubEventSchema } from '@driftline/protocol';
import { SseParser } from '../../core/sseParser.js';
import type { Clock } from '../../ports/Clock.js';
import type { LiveEvents, LiveState } from '../../ports/LiveEvents.js';

export interface FetchEventStreamOptions {
  url?: string;
  clock: Clock;
  fetchFn?: typeof fetch;
  /** First reconnect delay; doubles per failed attempt up to `maxDelayMs`. */
  initialDelayMs?: number;
  maxDelayMs?: number;
  /** Called with events that did not validate (a hub newer than this dashboard); never thrown. */
  onInvalid?: (name: string, data: string) => void;
  /**
   * Connect at once (default), or stay `signed-out` until `reconnect()`: the dashboard connects once the
   * hub has accepted its session, so a page showing the sign-in form makes no refused request.
   */
  autoStart?: boolean;
}

/**
 * `/api/events` over `fetch` rather than `EventSource`: it sends `Last-Event-ID` on every reconnect,
 * including ones it starts itself after a drop, and it runs the same in browsers and in tests. When the
 * hub cannot catch the stream up (it restarted, or the dashboard fell too far behind) it sends `reset`
 * (an older hub: `reload`); subscribers get `{ type: 'reset' }` and must re-read everything.
 */
export class FetchEventStream implements LiveEvents {
  private readonly listeners = new Set<(e: HubEvent) => void>();
  private readonly stateListeners = new Set<(s: LiveState) => void>();
  private current: LiveState = 'connecting';
  private lastEventId: string | null = null;
  private abort: AbortController | null = null;
  private cancelRetry: (() => void) | null = null;
  private failures = 0;
  private closed = false;
  /** Bumped by every (re)start: an attempt that finds it moved on was superseded and stays quiet. */
  private generation = 0;

  constructor(private readonly opts: FetchEventStreamOptions) {
    if (opts.autoStart === false) this.current = 'signed-out';
    else void this.connect();
  }

  subscribe(fn: (e: HubEvent) => void) {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }
  onState(fn: (s: LiveState) => void) {
    this.stateListeners.add(fn);
    return () => this.stateListeners.delete(fn);
  }
  state() {
    return this.current;
  }
  reconnect() {
    if (this.closed || this.current === 'live') return;
    this.stop();
    this.failures = 0;
    void this.connect();
  }
  disconnect() {
    if (this.closed) return;
    this.stop();
    this.setState('signed-out');
  }
  close() {
    this.closed = true;
    this.stop();
    this.setState('closed');
  }

  private stop() {
    this.generation++;
    this.abort?.abort();
    this.cancelRetry?.();
    this.cancelRetry = null;
  }

  private setState(s: LiveState) {
    if (s === this.current) return;
    this.current = s;
    for (const fn of this.stateListeners) fn(s);
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    const generation = this.generation;
    if (this.current === 'signed-out') this.setState('connecting');
    this.abort = new AbortController();
    const headers: Record<string, string> = { accept: 'text/event-stream' };
    if (this.lastEventId !== null) headers['last-event-id'] = this.lastEventId;
    const parser = new SseParser();
    try {
      const fetchFn = this.opts.fetchFn ?? ((...a) => fetch(...a));
      const res = await fetchFn(this.opts.url ?? API_PATHS.events, { headers, signal: this.abort.signal });
      if (res.status === 401) {
        // No credential, or it ended: retrying cannot help until someone signs in.
        void res.body?.cancel();
        if (generation === this.generation) this.setState('signed-out');
        return;
      }
      if (!res.ok || !res.body) throw new Error(`HTTP ${res.status}`);
      this.failures = 0;
      this.setState('live');
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        for (const msg of parser.push(value)) {
          if (msg.id !== null) this.lastEventId = msg.id;
          this.dispatch(msg.event, msg.data);
        }
      }
    } catch {
      // A drop or refusal: fall through to reconnect (unless closed on purpose).
    }
    if (this.closed || generation !== this.generation) return;
    this.setState('reconnecting');
    const base = parser.retryMs ?? this.opts.initialDelayMs ?? 1000;
    const delay = Math.min(base * 2 ** this.failures, this.opts.maxDelayMs ?? 30_000);
    this.failures++;
    this.cancelRetry = this.opts.clock.after(delay, () => void this.connect());
  }

  private dispatch(name: string, data: string) {
    // A hub before epoch ids said `reload` for "you missed too much": the same as `reset` (re-read all).
    if (name === 'reload') {
      for (const fn of this.listeners) fn({ type: 'reset', reason: 'behind' });
      return;
    }
    let json: unknown;
    try {
      json = JSON.parse(data);
    } catch {
      this.opts.onInvalid?.(name, data);
      return;
    }
    // The event name carries the type; `data` may or may not repeat it.
    const withType = json && typeof json === 'object' && !('type' in json) ? { type: name, ...json } : json;
    const parsed = HubEventSchema.safeParse(withType);
    if (!parsed.success) {
      this.opts.onInvalid?.(name, data);
      return;
    }
    for (const fn of this.listeners) fn(parsed.data);
  }
}
