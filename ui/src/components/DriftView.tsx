import type { DriftEpisode, DriftGroup, Waiver } from '@driftline/protocol';
import { useId, useState } from 'preact/hooks';
import type { Route } from '../core/route.js';
import { waiverScope } from '../core/waiverScope.js';
import { useLoad } from '../hooks/useLoad.js';
import { useNow } from '../hooks/useNow.js';
import { linkProps } from '../hooks/useRoute.js';
import { useWhyNot } from '../hooks/useSession.js';
import { useServices } from '../services.js';
import { RelTime } from './RelTime.js';

type Go = (r: Route) => void;

const duration = (s: number) =>
  s < 120
    ? `${s} s`
    : s < 7200
      ? `${Math.round(s / 60)} min`
      : s < 172_800
        ? `${Math.round(s / 3600)} h`
        : `${Math.round(s / 86_400)} d`;

/** A grouped row's "Waive…" form: pattern is the row's signature; reason and expiry are asked. */
function WaiveForm({ group, onDone }: { group: DriftGroup; onDone: (w: Waiver | null) => void }) {
  const { api } = useServices();
  const [reason, setReason] = useState('');
  const [expires, setExpires] = useState('7d');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const id = useId();
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      onDone(await api.addWaiver({ pattern: group.signature, expires, reason }));
    } catch (x) {
      setError((x as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="waive-form" onSubmit={submit} aria-label={`Waive ${group.signature}`}>
      <label for={`${id}-reason`}>Reason</label>{' '}
      <input
        id={`${id}-reason`}
        required
        maxLength={500}
        value={reason}
        onInput={(e) => setReason(e.currentTarget.value)}
      />{' '}
      <label for={`${id}-expires`}>Expires</label>{' '}
      <input
        id={`${id}-expires`}
        required
        size={22}
        value={expires}
        onInput={(e) => setExpires(e.currentTarget.value)}
        aria-describedby={`${id}-hint`}
      />{' '}
      <span id={`${id}-hint`} class="muted small">
        30m, 12h, 7d or an ISO time
      </span>{' '}
      <button type="submit" disabled={busy}>
        Waive {group.open + group.waived} episode{group.open + group.waived === 1 ? '' : 's'}
      </button>{' '}
      <button type="button" onClick={() => onDone(null)}>
        Cancel
      </button>
      {error ? (
        <p class="error" role="alert">
          {error}
        </p>
      ) : null}
    </form>
  );
}

function Episodes({ signature, now }: { signature: string; now: number }) {
  const { api } = useServices();
  const [loaded] = useLoad(() => api.drift({ signature, limit: 100 }), [api, signature]);
  if (loaded.state === 'loading') return <p aria-busy="true">Loading the episodes…</p>;
  if (loaded.state === 'error')
    return (
      <p class="error" role="alert">
        Could not load the episodes: {loaded.message}
      </p>
    );
  const rows: DriftEpisode[] = loaded.data.episodes;
  return (
    <table class="table" aria-label="Episodes of this signature, newest first">
      <thead>
        <tr>
          <th scope="col">site</th>
          <th scope="col">cell</th>
          <th scope="col">address</th>
          <th scope="col">attributes</th>
          <th scope="col">state</th>
          <th scope="col">first seen</th>
          <th scope="col">last seen</th>
          <th scope="col">lasted</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((e) => (
          <tr key={e.id} data-state={e.state}>
            <td>{e.site}</td>
            <td>
              {e.environment} / {e.component}
            </td>
            <td>
              <code>{e.address || '—'}</code>
            </td>
            <td>{e.attributes.join(', ') || '—'}</td>
            <td>
              <span class={`mark state-${e.state}`}>{e.state}</span>
              {e.acknowledgedBy ? <span class="muted"> — acknowledged by {e.acknowledgedBy}</span> : null}
            </td>
            <td>
              <RelTime iso={e.firstSeen} now={now} />
            </td>
            <td>
              <RelTime iso={e.lastSeen} now={now} />
            </td>
            <td>{duration(e.durationS)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/**
 * Drift as objects (decision 421): one row per signature (the same problem at many sites is one row)
 * with sites, cells, open and waived; a row's episodes; a "Waive…" button per row; the waivers.
 */
export function DriftView({ signature, go }: { signature: string | null; go: Go }) {
  const { api } = useServices();
  const now = useNow();
  const [version, setVersion] = useState(0);
  const [groups] = useLoad(() => api.driftGroups(), [api, version]);
  const [waivers] = useLoad(() => api.waivers(), [api, version]);
  const [waiving, setWaiving] = useState<string | null>(null);
  const [note, setNote] = useState<string | null>(null);
  const denied = useWhyNot('waive');
  const remove = async (id: string) => {
    try {
      await api.removeWaiver(id);
      setNote(`Removed waiver ${id}: the drift it covered is back.`);
      setVersion((v) => v + 1);
    } catch (e) {
      setNote((e as Error).message);
    }
  };
  if (groups.state === 'loading') return <p aria-busy="true">Loading drift…</p>;
  if (groups.state === 'error')
    return (
      <p class="error" role="alert">
        Could not load drift: {groups.message}
      </p>
    );
  const { totals } = groups.data;
  return (
    <section aria-labelledby="drift-title">
      <h1 id="drift-title" class="view-title">
        Drift
      </h1>
      <p>
        {totals.open} open drift episode{totals.open === 1 ? '' : 's'}, {totals.waived} waived,{' '}
        {totals.checks} failing check{totals.checks === 1 ? '' : 's'}, {totals.failures} failure
        {totals.failures === 1 ? '' : 's'}.
      </p>
      {note ? (
        <p role="status" class="note">
          {note}
        </p>
      ) : null}
      <section aria-label="Grouped by signature">
        <h2>One row per signature</h2>
        {groups.data.groups.length === 0 ? (
          <p>No open drift, failing check or failure.</p>
        ) : (
          <table class="table drift-groups" aria-label="Open episodes grouped by signature, most cells first">
            <thead>
              <tr>
                <th scope="col">signature</th>
                <th scope="col">sites</th>
                <th scope="col">cells</th>
                <th scope="col">open</th>
                <th scope="col">waived</th>
                <th scope="col">first seen</th>
                <th scope="col">
                  <span class="sr-only">actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {groups.data.groups.map((g) => (
                <tr key={g.signature} data-signature={g.signature}>
                  <td>
                    <a {...linkProps({ view: 'drift', signature: g.signature }, go)}>
                      <code>{g.signature}</code>
                    </a>
                    {g.detail ? <span class="muted"> — {g.detail}</span> : null}
                    {waiving === g.signature ? (
                      <WaiveForm
                        group={g}
                        onDone={(w) => {
                          setWaiving(null);
                          if (w) {
                            setNote(
                              `Waived ${w.covers} episode${w.covers === 1 ? '' : 's'} until ${w.expiresAt}.`,
                            );
                            setVersion((v) => v + 1);
                          }
                        }}
                      />
                    ) : null}
                  </td>
                  <td>{g.sites}</td>
                  <td>{g.cells}</td>
                  <td>{g.open}</td>
                  <td>{g.waived}</td>
                  <td>
                    <RelTime iso={g.firstSeen} now={now} />
                  </td>
                  <td>
                    {g.kind !== 'failure' && g.open > 0 ? (
                      <button
                        type="button"
                        aria-disabled={denied ? 'true' : undefined}
                        title={denied ?? undefined}
                        onClick={() => !denied && setWaiving(g.signature)}
                      >
                        Waive…
                      </button>
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
      {signature ? (
        <section aria-label="Episodes">
          <h2>
            Episodes of <code>{signature}</code>
          </h2>
          <Episodes signature={signature} now={now} />
        </section>
      ) : null}
      <section aria-label="Waivers">
        <h2>Waivers</h2>
        {waivers.state !== 'ok' ? (
          <p aria-busy={waivers.state === 'loading' ? 'true' : undefined}>
            {waivers.state === 'loading'
              ? 'Loading the waivers…'
              : `Could not load the waivers: ${waivers.message}`}
          </p>
        ) : waivers.data.waivers.length === 0 ? (
          <p>No waivers.</p>
        ) : (
          <table class="table" aria-label="Waivers">
            <thead>
              <tr>
                <th scope="col">pattern</th>
                <th scope="col">scope</th>
                <th scope="col">reason</th>
                <th scope="col">by</th>
                <th scope="col">expires</th>
                <th scope="col">state</th>
                <th scope="col">
                  <span class="sr-only">actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {waivers.data.waivers.map((w) => (
                <tr key={w.id}>
                  <td>
                    <code>{w.pattern}</code>
                  </td>
                  <td>{waiverScope(w)}</td>
                  <td>{w.reason}</td>
                  <td>{w.author}</td>
                  <td>
                    <RelTime iso={w.expiresAt} now={now} />
                  </td>
                  <td>{w.removedAt ? 'removed' : w.active ? `covers ${w.covers}` : 'expired'}</td>
                  <td>
                    {w.active && !denied ? (
                      <button type="button" onClick={() => remove(w.id)}>
                        Remove
                      </button>
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
    </section>
  );
}
