/**
 * `@driftline/hop/timing`: when to try again. Pure (no I/O imports), so the `core` of the agent and the
 * relay may use it: one {@link backoffDelay} and one {@link Ticker} for every kick-and-timer loop.
 */
export { backoffDelay } from './timing/backoff.js';
export { type SetTimer, systemTimer, Ticker, type TickerOptions } from './timing/Ticker.js';
