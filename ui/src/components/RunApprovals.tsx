import type { RunDetail } from '@driftline/protocol';
import { useState } from 'preact/hooks';
import { applyStarted } from '../core/approve.js';
import type { Route } from '../core/route.js';
import { useLoad } from '../hooks/useLoad.js';
import { useServices } from '../services.js';
import { ApprovalJourneys } from './ApprovalJourneys.js';
import { ApproveRun } from './ApproveRun.js';

/**
 * A run's approval trail first, then, for an approver and only while nothing of it is being or was applied,
 * the "Approve…" button; re-read after each submission.
 */
export function RunApprovals({ run, now, go }: { run: RunDetail; now: number; go: (r: Route) => void }) {
  const { api } = useServices();
  const [round, setRound] = useState(0);
  const [loaded] = useLoad(() => api.approvals(run.site, run.runId), [api, run.site, run.runId, round]);
  return (
    <>
      {loaded.state === 'ok' ? (
        <ApprovalJourneys approvals={loaded.data.approvals} now={now} go={go} />
      ) : null}
      {loaded.state === 'ok' && !applyStarted(loaded.data.approvals) ? (
        <ApproveRun run={run} onSubmitted={() => setRound((n) => n + 1)} />
      ) : null}
      {loaded.state === 'error' ? (
        <p class="muted small">Could not load this run's approvals: {loaded.message}</p>
      ) : null}
    </>
  );
}
