/** Time for the dashboard, as a port so tests move it by hand (STYLE: time through a `Clock`). */
export interface Clock {
  now(): number;
  /** Calls `fn` every `ms`; answers a function that stops it. */
  every(ms: number, fn: () => void): () => void;
  /** Calls `fn` once after `ms`; answers a function that cancels it. */
  after(ms: number, fn: () => void): () => void;
}
