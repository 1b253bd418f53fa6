export * from './cbor.js';
export * from './heartbeat.js';
export * from './kinds.js';
export * from './link.js';
export * from './message.js';
export * from './publication.js';
export * from './replay.js';
