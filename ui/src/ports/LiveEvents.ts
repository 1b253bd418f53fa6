import type { HubEvent } from '@driftline/protocol';

/** `signed-out`: the hub refused the stream (401) or the dashboard signed out; it waits for `reconnect`. */
export type LiveState = 'connecting' | 'live' | 'reconnecting' | 'signed-out' | 'closed';

/** The hub's event stream (`/api/events`): validated events and the connection's state. */
export interface LiveEvents {
  subscribe(onEvent: (event: HubEvent) => void): () => void;
  onState(fn: (state: LiveState) => void): () => void;
  state(): LiveState;
  /** Connects now with a fresh backoff (after signing in); no-op while live or once closed. */
  reconnect(): void;
  /** Drops the stream and waits for `reconnect` (after signing out). */
  disconnect(): void;
  close(): void;
}
