import type { ResourceChange } from '@driftline/protocol';
import { maskedTitle } from '../core/masked.js';
import type { Route } from '../core/route.js';
import { countsSentence } from '../core/status.js';
import { formatLag } from '../core/time.js';
import { useLoad } from '../hooks/useLoad.js';
import { useNow } from '../hooks/useNow.js';
import { linkProps } from '../hooks/useRoute.js';
import { useServices } from '../services.js';
import { PlanNow } from './PlanNow.js';
import { RelTime } from './RelTime.js';
import { RunApprovals } from './RunApprovals.js';
import { detailStateOf, RunDetailNote } from './RunDetailNote.js';
import { StateLockNote } from './StateLockNote.js';
import { StatusBadge } from './StatusBadge.js';

function ResourceTable({
  title,
  resources,
  empty,
}: {
  title: string;
  resources: ResourceChange[];
  empty: string;
}) {
  return (
    <>
      <h2>{title}</h2>
      {resources.length === 0 ? (
        <p class="muted">{empty}</p>
      ) : (
        <table class="table">
          <thead>
            <tr>
              <th scope="col">address</th>
              <th scope="col">actions</th>
              <th scope="col">changed attributes</th>
            </tr>
          </thead>
          <tbody>
            {resources.map((r) => (
              <tr key={r.address}>
                <td>
                  <code title={maskedTitle(r.address)}>{r.address}</code>
                  {r.previousAddress ? (
                    <span class="muted small" title={maskedTitle(r.previousAddress)}>
                      {' '}
                      (moved from {r.previousAddress})
                    </span>
                  ) : null}
                  {r.reason ? <span class="muted small"> — {r.reason}</span> : null}
                </td>
                <td>{r.actions.join(', ')}</td>
                <td>{r.changedAttributes.length ? r.changedAttributes.join(', ') : '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}

/** What the redaction policy a run was made under means for its addresses. */
function policyTitle(policy: string | undefined): string {
  return policy === undefined || policy === '1'
    ? 'Made before variable values were masked: addresses may differ from later runs only because later ones mask them.'
    : 'Every variable value not named public is masked in addresses (⟨name:tag⟩), so an address that differs from a policy-1 run may be a masked key, not a renamed resource.';
}

/**
 * One run: drift apart from proposed changes, actions, changed attribute names, failure reason and excerpt;
 * while the per-resource detail is not here, what the summary says and where the detail stands.
 */
export function RunView({ runId, go }: { runId: string; go: (r: Route) => void }) {
  const { api } = useServices();
  const now = useNow();
  const [loaded] = useLoad(() => api.run(runId), [api, runId]);
  if (loaded.state === 'loading') return <p aria-busy="true">Loading run {runId}…</p>;
  if (loaded.state === 'error')
    return (
      <p class="error" role="alert">
        Could not load run {runId}: {loaded.message}
      </p>
    );
  const r = loaded.data;
  const s = r.summary;
  const resources = s.resources ?? [];
  const detail = detailStateOf(r);
  return (
    <section aria-labelledby="run-title">
      <h1 id="run-title" class="view-title">
        Run {r.runId}
      </h1>
      <p>
        <a {...linkProps({ view: 'site', site: r.site }, go)}>{r.site}</a> /{' '}
        <a
          {...linkProps(
            { view: 'cell', site: r.site, environment: r.environment, component: r.component, status: null },
            go,
          )}
        >
          {r.environment} / {r.component}
        </a>
      </p>
      <p>
        <StatusBadge status={r.status} counts={r.counts} reason={r.reason} />
      </p>
      <dl class="facts">
        {r.counts ? (
          <>
            <dt>Plan</dt>
            <dd>{countsSentence(r.counts)}</dd>
          </>
        ) : null}
        <dt>Planned</dt>
        <dd>
          <RelTime iso={r.plannedAt} now={now} focusable /> by {r.agent}
        </dd>
        <dt>Received</dt>
        <dd>{formatLag(r.plannedAt, r.receivedAt)}</dd>
        {s.terraformVersion ? (
          <>
            <dt>Tool</dt>
            <dd>{s.terraformVersion}</dd>
          </>
        ) : null}
        {s.git ? (
          <>
            <dt>Commit</dt>
            <dd>
              <code>{s.git.commit.slice(0, 12)}</code>
              {s.git.branch ? ` on ${s.git.branch}` : ''}
              {s.git.dirty ? ' (dirty)' : ''}
            </dd>
          </>
        ) : null}
        {s.exitCode !== undefined ? (
          <>
            <dt>Exit code</dt>
            <dd>{s.exitCode}</dd>
          </>
        ) : null}
        <dt>Redaction</dt>
        <dd title={policyTitle(s.redactionPolicy)}>policy {s.redactionPolicy ?? '1'}</dd>
      </dl>
      {s.reason ? (
        <section class="failure" aria-label="Failure">
          <h2>Reason</h2>
          <p>
            <code>{s.reason}</code>
          </p>
          {s.errorExcerpt ? <pre class="excerpt">{s.errorExcerpt}</pre> : null}
        </section>
      ) : null}
      {s.lock ? <StateLockNote lock={s.lock} stuck={s.reason === 'stuck-lock'} /> : null}
      {detail === 'arrived' ? (
        <>
          <ResourceTable
            title="Drift (changed outside Terraform)"
            resources={resources.filter((x) => x.drift)}
            empty="No drift found."
          />
          <ResourceTable
            title="Proposed changes"
            resources={resources.filter((x) => !x.drift)}
            empty="No changes proposed."
          />
        </>
      ) : (
        <RunDetailNote state={detail} summary={s} unchanged={r.unchanged} pending={r.detailPending} />
      )}
      {s.outputChanges?.length ? (
        <>
          <h2>Outputs that change</h2>
          <p>{s.outputChanges.join(', ')}</p>
        </>
      ) : null}
      <PlanNow site={r.site} environment={r.environment} component={r.component} />
      <RunApprovals run={r} now={now} go={go} />
    </section>
  );
}
