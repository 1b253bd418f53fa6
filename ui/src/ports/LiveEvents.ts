import type { HubEvent } from '@driftline/protocol';

export type LiveState = 'connecting' | 'live' | 'reconnecting' | 'closed';

/** The hub's event stream (`/api/events`): validated events and the connection's state. */
export interface LiveEvents {
  subscribe(onEvent: (event: HubEvent) => void): () => void;
  onState(fn: (state: LiveState) => void): () => void;
  state(): LiveState;
  close(): void;
}
