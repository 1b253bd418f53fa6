import { join } from 'node:path';
import { openSqliteLedger } from '../adapters/sqlite/openSqliteLedger.js';
import type { AgentConfig } from '../config.js';

/** The agent's ledger over `<dataDir>/agent.sqlite`, bounded as the config's `sync` section says. */
export function openAgentStore(config: AgentConfig, now: () => number): ReturnType<typeof openSqliteLedger> {
  return openSqliteLedger({
    path: join(config.dataDir, 'agent.sqlite'),
    site: config.site,
    agent: config.agent,
    maxDocBytes: config.sync.maxDocBytes,
    maxDocChanges: config.sync.maxDocChanges,
    maxQueueBytes: config.sync.maxQueueBytes,
    resendAfterMs: config.sync.resendAfterS * 1000,
    custodyDeadlineMs: config.sync.custodyDeadlineS * 1000,
    rejectedRetryMs: config.sync.rejectedRetryS * 1000,
    holdNewsMs: config.sync.newsHoldS * 1000,
    // a quiet round as its heartbeat change, which a v2 push carries as a heartbeat (decision 500)
    heartbeats: config.sync.wire === 2,
    now,
  });
}
