import type { ApprovalJourney, RunDetail } from '@driftline/protocol';
import { useId, useState } from 'preact/hooks';
import { APPROVAL_LIFETIMES, approvable, signRunApproval } from '../core/approve.js';
import { useWhyNot } from '../hooks/useSession.js';
import { useServices } from '../services.js';

/**
 * "Approve…": for an approver, on a run with changes that kept its saved plan file. Asks for the approver's private
 * key file, signs the approval in this browser (WebCrypto Ed25519) and submits only the signed approval;
 * the key is never uploaded. The site's agent applies only if its own config pins the key.
 */
export function ApproveRun({
  run,
  onSubmitted,
}: {
  run: RunDetail;
  onSubmitted: (j: ApprovalJourney) => void;
}) {
  const { api, clock } = useServices();
  const denied = useWhyNot('approve');
  const [open, setOpen] = useState(false);
  const [file, setFile] = useState<File | null>(null);
  const [lifetimeMs, setLifetimeMs] = useState(APPROVAL_LIFETIMES[1]?.ms ?? 86_400_000);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState<ApprovalJourney | null>(null);
  const ids = { file: useId(), lifetime: useId(), note: useId() };
  if (denied || !approvable(run)) return null;

  const submit = async (e: Event) => {
    e.preventDefault();
    if (!file) {
      setError('choose your approver key file first');
      return;
    }
    setBusy(true);
    setError(null);
    try {
      const signed = await signRunApproval(await file.text(), run, { now: clock.now(), lifetimeMs });
      if (!signed.ok) {
        setError(signed.reason);
        return;
      }
      const journey = await api.submitApproval(signed.approval);
      setDone(journey);
      setOpen(false);
      setFile(null);
      onSubmitted(journey);
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };

  return (
    <div class="approve-run">
      {open ? (
        <form onSubmit={submit} aria-label="Approve this plan" aria-describedby={ids.note}>
          <p id={ids.note} class="muted small">
            Approves applying exactly this saved plan ({run.summary.planFileSha256?.slice(0, 12)}…) at{' '}
            {run.site}. Your key file is read in this browser to sign; it is never uploaded.
          </p>
          <label for={ids.file}>Approver key file (PKCS#8 PEM)</label>
          <input
            id={ids.file}
            type="file"
            accept=".pem,application/x-pem-file,text/plain"
            onChange={(e) => setFile((e.currentTarget as HTMLInputElement).files?.[0] ?? null)}
          />
          <label for={ids.lifetime}>Valid for</label>
          <select
            id={ids.lifetime}
            value={String(lifetimeMs)}
            onChange={(e) => setLifetimeMs(Number((e.currentTarget as HTMLSelectElement).value))}
          >
            {APPROVAL_LIFETIMES.map((l) => (
              <option key={l.ms} value={String(l.ms)}>
                {l.label}
              </option>
            ))}
          </select>
          <button type="submit" disabled={busy}>
            Sign and submit
          </button>
          <button type="button" onClick={() => setOpen(false)} disabled={busy}>
            Cancel
          </button>
        </form>
      ) : (
        <button type="button" onClick={() => setOpen(true)}>
          Approve…
        </button>
      )}
      <span role="status" class="approve-state">
        {done ? `Approval ${done.approvalId} submitted; the hub relays it to ${done.site}` : ''}
      </span>
      {error ? (
        <p class="error" role="alert">
          Could not approve: {error}
        </p>
      ) : null}
    </div>
  );
}
