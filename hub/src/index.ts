/**
 * The hub's public entry point: what benchmarks, the simulator and embedders may use without reaching
 * into `src/`. The CLI (`bin/hub`) is the way to run a hub.
 */
export { sha256Hex } from './adapters/hop/HubHopBackend.js';
export { createHub, type Hub } from './app.js';
export { type HubConfig, parseConfig } from './config.js';
export { enrol } from './core/enrolment.js';
export { addUser } from './core/users.js';
