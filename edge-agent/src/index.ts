/**
 * The edge agent's public entry point: what benchmarks, the simulator and embedders may use without
 * reaching into `src/`. The CLI (`bin/edge-agent`) is the way to run an agent.
 */

export { initAgentKey } from './adapters/fs/agentKeys.js';
export { HttpUplink } from './adapters/http/HttpUplink.js';
export { Wire2State } from './adapters/http/wire2State.js';
export { openSqliteLedger } from './adapters/sqlite/openSqliteLedger.js';
export { SqliteUrlStorage } from './adapters/tus/SqliteUrlStorage.js';
export { AGENT_VERSION, packDetail, type RunningAgent, startAgent } from './app.js';
export { readAgentStatus, statusJson } from './commands/status.js';
export { type AgentConfig, AgentConfigSchema, loadConfig, parseConfig } from './config.js';
export { newEpochDoc, recordRun, recordRuns, updateFacts } from './core/doc/agentDoc.js';
export { toDocValue } from './core/doc/docValues.js';
export type { AgentLedger } from './core/ledger/AgentLedger.js';
export { summarisePlan } from './core/plan/summarisePlan.js';
export { RecordBatcher } from './core/record/RecordBatcher.js';
export { SyncEngine } from './core/sync/SyncEngine.js';
export { SyncLoop } from './core/sync/SyncLoop.js';
export type { ProcessResult, ProcessRunner, ProcessSpec } from './ports/ProcessRunner.js';
export type { Uplink } from './ports/Uplink.js';
