import type { AuditEntry } from '@driftline/protocol';
import { useState } from 'preact/hooks';
import { useLoad } from '../hooks/useLoad.js';
import { useNow } from '../hooks/useNow.js';
import { useServices } from '../services.js';
import { RelTime } from './RelTime.js';

const PAGE = 100;

/** The hub's audit log, newest first: who did what, through which credential, to what, and how it ended. */
export function AuditView() {
  const { api } = useServices();
  const now = useNow();
  const [loaded] = useLoad(() => api.audit({ limit: PAGE }), [api]);
  const [older, setOlder] = useState<AuditEntry[]>([]);
  const [paging, setPaging] = useState<'idle' | 'busy' | 'end'>('idle');
  const [pageError, setPageError] = useState<string | null>(null);
  if (loaded.state === 'loading') return <p aria-busy="true">Loading the audit log…</p>;
  if (loaded.state === 'error')
    return (
      <p class="error" role="alert">
        Could not load the audit log: {loaded.message}
      </p>
    );
  const entries = [...loaded.data.entries, ...older];
  const last = entries.at(-1);
  const loadOlder = async () => {
    if (!last) return;
    setPaging('busy');
    setPageError(null);
    try {
      const page = await api.audit({ before: String(last.id), limit: PAGE });
      setOlder((o) => [...o, ...page.entries]);
      setPaging(page.entries.length < PAGE ? 'end' : 'idle');
    } catch (e) {
      setPageError((e as Error).message);
      setPaging('idle');
    }
  };
  const canPage = loaded.data.entries.length >= PAGE && paging !== 'end';
  return (
    <section aria-labelledby="audit-title">
      <h1 id="audit-title" class="view-title">
        Audit log
      </h1>
      {entries.length === 0 ? (
        <p>Nothing recorded yet.</p>
      ) : (
        <table class="table audit" aria-label="Audit log, newest first">
          <thead>
            <tr>
              <th scope="col">when</th>
              <th scope="col">who</th>
              <th scope="col">via</th>
              <th scope="col">action</th>
              <th scope="col">target</th>
              <th scope="col">outcome</th>
              <th scope="col">from</th>
            </tr>
          </thead>
          <tbody>
            {entries.map((e) => (
              <tr key={e.id}>
                <td>
                  <RelTime iso={e.at} now={now} focusable />
                </td>
                <td>{e.actor}</td>
                <td>{e.via}</td>
                <td>
                  <code>{e.action}</code>
                </td>
                <td>{e.target || '—'}</td>
                <td>
                  <span class={`mark outcome-${e.outcome}`}>{e.outcome}</span>
                  {e.detail ? <span class="muted"> — {e.detail}</span> : null}
                </td>
                <td class="muted">{e.address || '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {canPage ? (
        <button type="button" onClick={loadOlder} disabled={paging === 'busy'}>
          {paging === 'busy' ? 'Loading older entries…' : 'Older entries'}
        </button>
      ) : null}
      {pageError ? (
        <p class="error" role="alert">
          Could not load older entries: {pageError}
        </p>
      ) : null}
    </section>
  );
}
