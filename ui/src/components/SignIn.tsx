import { useEffect, useRef, useState } from 'preact/hooks';
import type { SignedOutReason } from '../hooks/useAuth.js';

const NOTICE: Record<SignedOutReason, string | null> = {
  none: null,
  'link-failed': 'That sign-in link was wrong or has expired. Paste your token below, or ask for a new link.',
  ended: 'Your session has ended (it expired, or was signed out elsewhere). Sign in again to carry on.',
  'signed-out': 'You have signed out.',
};

/** The sign-in page: one password-type token field, focused on arrival, submitted with Enter. */
export function SignIn({
  reason,
  onSignIn,
}: {
  reason: SignedOutReason;
  onSignIn: (token: string) => Promise<string | null>;
}) {
  const [token, setToken] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const field = useRef<HTMLInputElement>(null);
  useEffect(() => field.current?.focus(), []);

  const submit = async (e: Event) => {
    e.preventDefault();
    const t = token.trim();
    if (!t) {
      setError('paste your token into the field first');
      field.current?.focus();
      return;
    }
    setBusy(true);
    setError(null);
    const failed = await onSignIn(t);
    // On success this page is replaced by the dashboard; only a failure comes back here.
    if (failed) {
      setBusy(false);
      setError(failed);
      field.current?.focus();
      field.current?.select();
    }
  };

  const notice = NOTICE[reason];
  return (
    <section class="signin" aria-labelledby="signin-title">
      <h1 id="signin-title" class="view-title">
        Sign in to Driftline
      </h1>
      {notice ? (
        <p
          class={`banner${reason === 'link-failed' ? ' error' : ''}`}
          role={reason === 'signed-out' ? 'status' : 'alert'}
        >
          {notice}
        </p>
      ) : null}
      <form onSubmit={submit} noValidate>
        <label for="signin-token">Operator token</label>
        <input
          id="signin-token"
          ref={field}
          name="token"
          type="password"
          autoComplete="current-password"
          spellcheck={false}
          required
          value={token}
          onInput={(e) => setToken((e.target as HTMLInputElement).value)}
          aria-invalid={error ? 'true' : undefined}
          aria-describedby={error ? 'signin-error signin-help' : 'signin-help'}
        />
        <p id="signin-help" class="muted small">
          The token <code>hub user add NAME --role …</code> printed once. <code>npm start</code> prints a
          sign-in link that fills this in for you.
        </p>
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
        {error ? (
          <p id="signin-error" class="error" role="alert">
            Sign-in failed: {error}
          </p>
        ) : null}
      </form>
    </section>
  );
}
