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

  const ofCell = (r: PlanRequest) =>
    r.site === site && r.environment === environment && r.component === component;
  useEffect(
    () =>
      live.subscribe((e) => {
        if (e.type !== 'plan-request-updated') return;
        // this page's request, or an open one of this cell asked elsewhere (the API, another page)
        setReq((cur) =>
          cur && cur.requestId === e.request.requestId
            ? e.request
            : !cur && ofCell(e.request) && isOpen(e.request)
              ? e.request
              : cur,
        );
      }),
    [live, site, environment, component],
  );

  // An open request of this cell when the page opens, whoever asked it: someone waiting on a slow link
  // follows it here too (newest first from the hub).
  useEffect(() => {
    let gone = false;
    api
      .planRequests(site)
      .then((r) => {
        const open = r.requests.find((x) => ofCell(x) && isOpen(x));
        if (!gone && open) setReq((cur) => cur ?? open);
      })
      .catch(() => {
        // not shown: the button still files a request, and its own state follows
      });
    return () => {
      gone = true;
    };
  }, [api, site, environment, component]);

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

  const open = req && isOpen(req);
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

const isOpen = (r: PlanRequest) => r.state === 'pending' || r.state === 'delivered' || r.state === 'running';
