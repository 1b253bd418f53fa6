import { asSiteId, type PlanRequest } from '@driftline/protocol';
import { useEffect, useId, useState } from 'preact/hooks';
import { planRequestSteps } from '../core/journeySteps.js';
import { planRequestText } from '../core/planRequestText.js';
import { useNow } from '../hooks/useNow.js';
import { useWhyNot } from '../hooks/useSession.js';
import { useServices } from '../services.js';
import { Journey } from './Journey.js';

/**
 * "Plan now": files a plan request and follows its own state over the live stream, with the times it
 * moved (`planRequestText`) and its journey, drawn as an approval's is (`Journey`, decision 560); the
 * run that answers it is the one the hub names for this request only. Without the operator
 * role the button stays focusable but inert (`aria-disabled`), and says why beside it.
 */
export function PlanNow({
  site,
  environment,
  component,
}: {
  site: string;
  environment: string;
  component: string;
}) {
  const { api, live } = useServices();
  const [req, setReq] = useState<PlanRequest | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const denied = useWhyNot('plan-request');
  const reasonId = useId();
  const now = useNow();

  useEffect(
    () =>
      live.subscribe((e) => {
        if (e.type === 'plan-request-updated') {
          setReq((cur) => (cur && cur.requestId === e.request.requestId ? e.request : cur));
        }
      }),
    [live],
  );

  const file = async () => {
    if (denied) return;
    setBusy(true);
    setError(null);
    try {
      setReq(await api.createPlanRequest({ site: asSiteId(site), environment, component }));
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };

  const open = req && (req.state === 'pending' || req.state === 'delivered' || req.state === 'running');
  return (
    <div class="plan-now">
      <button
        type="button"
        onClick={file}
        disabled={busy || !!open}
        aria-disabled={denied ? 'true' : undefined}
        aria-describedby={denied ? reasonId : undefined}
      >
        Plan now
      </button>
      {denied ? (
        <span id={reasonId} class="muted small">
          {denied}
        </span>
      ) : null}
      <span role="status" class="plan-state">
        {req ? `Plan request ${planRequestText(req)}` : ''}
      </span>
      {req ? <Journey steps={planRequestSteps(req)} now={now} label="Plan request journey" /> : null}
      {error ? (
        <p class="error" role="alert">
          Could not file the plan request: {error}
        </p>
      ) : null}
    </div>
  );
}
