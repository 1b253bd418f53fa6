/** A seeded pseudo-random source: same seed, same sequence. Returns numbers in [0, 1). */
export type Random = () => number;

/** FNV-1a over the text: turns names and seeds into 32-bit PRNG seeds. */
export function hashText(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/** mulberry32: small, fast, good enough for simulation (not for cryptography). */
export function seededRandom(seed: number | string): Random {
  let a = typeof seed === 'string' ? hashText(seed) : seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Milliseconds to the next event of a Poisson process with `perMinute` events a minute (Infinity if 0). */
export function nextEventMs(perMinute: number, random: Random): number {
  if (perMinute <= 0) return Number.POSITIVE_INFINITY;
  return (-Math.log(1 - random()) * 60_000) / perMinute;
}
