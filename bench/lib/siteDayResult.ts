import type { TappedResponse } from './httpTap.js';

/** A round as siteDay's `--breakdown` hands it on: each cell's plan end and whether it changed, and the pushed changes. */
export interface RoundFacts {
  cells: { at: number; changed: boolean }[];
  changes: string[];
}

export interface DayResult {
  bytesUp: number;
  bytesDown: number;
  requests: number;
  pollOnlyBytes: number;
  floorBytes: number;
  /** The floor with one signature per direction per round (the agent's up, the hub's ack down). */
  floorBothWaysBytes: number;
  automergeSyncBytes: number;
  /** h2c: the connection's own bytes (preface, settings, window updates), counted once a day; and connections opened. */
  connectionBytes?: number;
  connections?: number;
}

/** An exchange's bytes each way, head and body. */
export const wire = (r: TappedResponse) => ({ up: r.reqBytes + r.reqHeadBytes, down: r.bytes });

/** A day's figures with its ratio to each floor and its cost at `tariff` USD per MB. */
export const ratedDay = <D extends DayResult>(d: D, tariff: number) => {
  const total = d.bytesUp + d.bytesDown;
  return {
    ...d,
    vsFloor: +(total / d.floorBytes).toFixed(2),
    vsFloorBothWays: +(total / d.floorBothWaysBytes).toFixed(2),
    costUsd: +((total / 1e6) * tariff).toFixed(3),
  };
};
