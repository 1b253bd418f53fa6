import type { Session } from '@driftline/protocol';
import { useState } from 'preact/hooks';

/**
 * "Signed in as NAME (roles)" and Sign out; a public, read-only view offers Sign in instead. A session
 * from an SSO proxy or a bearer token has nothing this page could end, so it shows no button.
 */
export function UserMenu({
  session,
  onSignOut,
  onSignIn,
}: {
  session: Session;
  onSignOut: () => Promise<string | null>;
  onSignIn: () => void;
}) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  if (session.via === 'public')
    return (
      <span class="who">
        Public, read-only view{' '}
        <button type="button" onClick={onSignIn}>
          Sign in
        </button>
      </span>
    );
  const signOut = async () => {
    setBusy(true);
    setError(null);
    const failed = await onSignOut();
    if (failed) {
      setBusy(false);
      setError(failed);
    }
  };
  return (
    <span class="who">
      Signed in as <strong>{session.user}</strong> ({session.roles.join(', ')})
      {session.via === 'session' ? (
        <>
          {' '}
          <button type="button" onClick={signOut} disabled={busy}>
            Sign out
          </button>
        </>
      ) : null}
      {error ? (
        <span class="error" role="alert">
          {' '}
          Could not sign out: {error}
        </span>
      ) : null}
    </span>
  );
}
