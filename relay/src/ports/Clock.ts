/** Time, injected so tests control it (STYLE.md, Tests). */
export interface Clock {
  now(): number;
}
export const systemClock: Clock = { now: () => Date.now() };
