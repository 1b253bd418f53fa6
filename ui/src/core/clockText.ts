import { formatOffset } from './time.js';

const UNITS: ReadonlyArray<[limitMs: number, sizeMs: number, unit: string]> = [
  [1000, 1, 'ms'],
  [3_600_000, 1000, 's'],
  [86_400_000, 60_000, 'min'],
  [Number.POSITIVE_INFINITY, 3_600_000, 'h'],
];

/**
 * A clock offset with its uncertainty for people, both in one unit and with the precision the uncertainty
 * allows: `+90.0 s ± 0.3 s`, `−310 ms ± 40 ms`, `+420 s ± 3 s`. The bound is rounded up, never down.
 * `null`: the hub has only a one-way bound yet; `undefined`: an older hub (the offset alone, as before).
 */
export function formatClockOffset(offsetMs: number | null, uncertaintyMs: number | null | undefined): string {
  if (offsetMs === null || uncertaintyMs === undefined) return formatOffset(offsetMs);
  if (uncertaintyMs === null) return `${formatOffset(offsetMs)} ± ? (no round trip yet)`;
  const [, size, unit] = UNITS.find(([limit]) => Math.max(Math.abs(offsetMs), uncertaintyMs) < limit) ?? [
    0,
    1,
    'ms',
  ];
  const u = uncertaintyMs / size;
  // One significant digit of the uncertainty sets the decimals (at most 3); whole units at least.
  const decimals = u > 0 && size > 1 ? Math.min(3, Math.max(0, Math.ceil(-Math.log10(u)))) : 0;
  const scale = 10 ** decimals;
  const bound = (Math.ceil(u * scale - 1e-9) / scale).toFixed(decimals);
  const value = (Math.round((Math.abs(offsetMs) / size) * scale) / scale).toFixed(decimals);
  return `${offsetMs >= 0 ? '+' : '−'}${value} ${unit} ± ${bound} ${unit}`;
}
