import { type PlanRequest, ulidTime } from '@driftline/protocol';

/** `12:03:10`, the browser's local time of day. */
export function clockTime(iso: string): string {
  return new Date(iso).toTimeString().slice(0, 8);
}

/**
 * What "Plan now" says of its own request, with the times it moved (issue 44, decision 560): `asked
 * 12:03:10, waiting for the site` → `asked 12:03:10, at relay-1 12:03:12, waiting for the site` → `asked
 * 12:03:10, delivered 12:03:41, waiting for the run` → `asked 12:03:10, running since 12:03:45` →
 * `done 12:04:02: run …`. A
 * request the site answered with the same plan as before (no new run: the hub names the run whose plan
 * it confirmed, which started before the request) says so, instead of naming that older run as the
 * answer. The run's start is its id's time (agent clock, ULID): a clock far behind the hub's could call
 * a new run unchanged, never an old one new.
 */
export function planRequestText(req: PlanRequest, time: (iso: string) => string = clockTime): string {
  const asked = `asked ${time(req.requestedAt)}`;
  const again = req.unconfirmed ? ' — unconfirmed: the agent has not said it arrived, sent again' : '';
  switch (req.state) {
    case 'pending': {
      const relay = req.relayAt ? `, at ${req.relay ?? 'the relay'} ${time(req.relayAt)}` : '';
      return `${asked}${relay}, waiting for the site${again}`;
    }
    case 'delivered':
      return `${asked}, delivered${req.deliveredAt ? ` ${time(req.deliveredAt)}` : ''}, waiting for the run${again}`;
    case 'running':
      return `${asked}, running${req.startedAt ? ` since ${time(req.startedAt)}` : ''}`;
    case 'done': {
      const at = req.doneAt ? ` ${time(req.doneAt)}` : '';
      if (!req.runId) return `${asked}, done${at}`;
      const started = ulidTime(req.runId);
      if (Number.isFinite(started) && started < Date.parse(req.requestedAt))
        return `${asked}, done${at}: planned again, unchanged since run ${req.runId}`;
      return `${asked}, done${at}: run ${req.runId}`;
    }
    case 'expired':
      return `${asked}, expired ${time(req.expiresAt)} before the site picked it up`;
    case 'refused':
      // The agent refuses what its own config does not list (S3); the hub refuses a request at once.
      return `${asked}, refused by the agent`;
  }
}
