/**
 * The relay's forwarding core and a memory custody, for benchmarks that drive forwarding without
 * processes (package export `@driftline/relay/forwarding`; docs/decisions/280-one-place-per-decision.md).
 */
export { MemoryCustody } from './adapters/memory/MemoryCustody.js';
export { type ContactPlan, contactState, windowsOf } from './core/contactPlan.js';
export { type ForwardEvent, forwardStep, type UpstreamSlot } from './core/Forwarder.js';
export type { Upstream } from './ports/Upstream.js';
