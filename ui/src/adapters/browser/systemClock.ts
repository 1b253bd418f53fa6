import type { Clock } from '../../ports/Clock.js';

export const systemClock: Clock = {
  now: () => Date.now(),
  every(ms, fn) {
    const t = setInterval(fn, ms);
    return () => clearInterval(t);
  },
  after(ms, fn) {
    const t = setTimeout(fn, ms);
    return () => clearTimeout(t);
  },
};
