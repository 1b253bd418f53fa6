/**
 * What benchmarks may use of the simulation's end-to-end helpers (package export
 * `@driftline/simulation/testing`), instead of importing `test/` files by path
 * (docs/decisions/280-one-place-per-decision.md).
 */
export { type BusySite, startBusySite } from './busySite.js';
export { ProcessGroup, setUpHub, until } from './support.js';
