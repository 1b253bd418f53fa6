import type { RunDetail } from '@driftline/protocol';
import { useState } from 'preact/hooks';
import { applyStarted } from '../core/approve.js';
import type { Route } from '../core/route.js';
import { supersededBy } from '../core/runFate.js';
import { useLoad } from '../hooks/useLoad.js';
import { linkProps } from '../hooks/useRoute.js';
import { useSiteEvents } from '../hooks/useSiteEvents.js';
import { useServices } from '../services.js';
import { ApprovalJourneys } from './ApprovalJourneys.js';
import { ApproveRun } from './ApproveRun.js';

/**
 * A run's approval trail first, then, for an approver and only while nothing of it is being or was applied
 * and no newer plan of its cell took its place, the "Approve…" button. Re-read after each submission and
 * whenever the live stream says something about the site (its journeys move without a reload).
 */
export function RunApprovals({ run, now, go }: { run: RunDetail; now: number; go: (r: Route) => void }) {
  const { api } = useServices();
  const [round, setRound] = useState(0);
  const live = useSiteEvents(run.site);
  const [loaded] = useLoad(async () => {
    const [approvals, later] = await Promise.all([
      api.approvals(run.site, run.runId),
      api
        .runs(run.site, run.environment, run.component, { ref: run.ref ?? null, limit: 20 })
        .catch(() => ({ runs: [] })),
    ]);
    return { approvals: approvals.approvals, superseded: supersededBy(run, later.runs) };
  }, [api, run.site, run.runId, round, live]);
  // Kept while a re-read is under way, so the trail does not blink at every live event.
  const [last, setLast] = useState<typeof loaded | null>(null);
  if (loaded.state !== 'loading' && loaded !== last) setLast(loaded);
  const shown = loaded.state === 'loading' ? last : loaded;
  if (!shown) return null;
  if (shown.state === 'error')
    return <p class="muted small">Could not load this run's approvals: {shown.message}</p>;
  if (shown.state !== 'ok') return null;
  const { approvals, superseded } = shown.data;
  return (
    <>
      <ApprovalJourneys approvals={approvals} now={now} go={go} />
      {superseded ? (
        <p class="muted small">
          A newer plan of this cell took this run's place:{' '}
          <a {...linkProps({ view: 'run', runId: superseded }, go)}>{superseded}</a>. Approve that one
          instead.
        </p>
      ) : !applyStarted(approvals) ? (
        <ApproveRun run={run} onSubmitted={() => setRound((n) => n + 1)} />
      ) : null}
    </>
  );
}
