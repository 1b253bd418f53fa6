export { createRelay, openStore, type Relay } from './app.js';
export { parseConfig, type RelayConfig, type RelayConfigInput, type ResolvedUpstream } from './config.js';
