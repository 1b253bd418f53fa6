/** Hub time, milliseconds since the epoch. Tests pass a controllable clock. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };
