/**
 * Whether this hub process runs the work that must run once per deployment, however many hub
 * processes share the store: sweeps (expiry, staleness, retention) and webhook delivery.
 */
export interface Leadership {
  isLeader(): boolean;
  close(): Promise<void>;
}

/** A store of one process (SQLite, memory): that process always leads. */
export const soleLeader: Leadership = {
  isLeader: () => true,
  close: async () => {},
};
