import type { Session } from '@driftline/protocol';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { signInFailed, withoutSignInMarker } from '../core/route.js';
import { ApiError } from '../ports/Api.js';
import { useServices } from '../services.js';

/** Why the sign-in page is showing. */
export type SignedOutReason = 'none' | 'link-failed' | 'ended' | 'signed-out';

export type Auth =
  | { state: 'checking' }
  | { state: 'signed-out'; reason: SignedOutReason }
  | { state: 'signed-in'; session: Session }
  | { state: 'error'; message: string };

export interface AuthControls {
  auth: Auth;
  /** Answers null when signed in, or what went wrong, for the form to show. */
  signIn(token: string): Promise<string | null>;
  /** Answers null when signed out, or what went wrong. */
  signOut(): Promise<string | null>;
  /** Shows the sign-in page (from a public, read-only view). */
  showSignIn(): void;
  /** Asks the hub again who this browser is (after an error). */
  recheck(): void;
}

const RESTREAM_EVERY_MS = 30_000;

function signInError(e: unknown): string {
  if (e instanceof ApiError && e.status === 401)
    return 'the hub does not know that token; check it was copied whole, or ask an admin for a new one';
  return (e as Error).message;
}

/**
 * Who the dashboard acts for: asks the hub on load, shows the sign-in page on a 401 (then or on any later
 * call), and starts or stops the live stream with the session.
 */
export function useAuth(): AuthControls {
  const { api, live, clock } = useServices();
  const [auth, setAuthState] = useState<Auth>({ state: 'checking' });
  // Listeners below read the state as of now, not as of the last render.
  const current = useRef(auth);
  const setAuth = useCallback((next: Auth) => {
    current.current = next;
    setAuthState(next);
  }, []);

  const signedOut = useCallback(
    (reason: SignedOutReason) => {
      setAuth({ state: 'signed-out', reason });
      live.disconnect();
    },
    [live, setAuth],
  );

  const check = useCallback(() => {
    setAuth({ state: 'checking' });
    api.session().then(
      (session) => {
        setAuth({ state: 'signed-in', session });
        live.reconnect();
      },
      (e: Error) => {
        if (e instanceof ApiError && e.status === 401)
          signedOut(signInFailed(window.location.search) ? 'link-failed' : 'none');
        else setAuth({ state: 'error', message: e.message });
      },
    );
  }, [api, live, signedOut, setAuth]);

  useEffect(check, [check]);

  useEffect(() => {
    const offApi = api.onUnauthorized(() => {
      if (current.current.state === 'signed-in') signedOut('ended');
    });
    // The stream learns first when a session ends in a quiet dashboard: ask the hub to be sure (a 401
    // lands in onUnauthorized above). If the session still holds, retry the stream, at most twice a minute.
    let lastRetry = Number.NEGATIVE_INFINITY;
    let cancelRetry = () => {};
    const offLive = live.onState((s) => {
      if (s !== 'signed-out' || current.current.state !== 'signed-in') return;
      api.session().then(
        () => {
          const wait = Math.max(0, lastRetry + RESTREAM_EVERY_MS - clock.now());
          cancelRetry();
          cancelRetry = clock.after(wait, () => {
            lastRetry = clock.now();
            if (current.current.state === 'signed-in') live.reconnect();
          });
        },
        // A 401 went to onUnauthorized; a hub out of reach shows in the live indicator already.
        () => undefined,
      );
    });
    return () => {
      offApi();
      offLive();
      cancelRetry();
    };
  }, [api, live, clock, signedOut]);

  const signIn = useCallback(
    async (token: string) => {
      try {
        const session = await api.signIn(token);
        const search = withoutSignInMarker(window.location.search);
        window.history.replaceState(null, '', `${window.location.pathname}${search}`);
        setAuth({ state: 'signed-in', session });
        live.reconnect();
        return null;
      } catch (e) {
        return signInError(e);
      }
    },
    [api, live, setAuth],
  );

  const signOut = useCallback(async () => {
    try {
      await api.signOut();
      signedOut('signed-out');
      return null;
    } catch (e) {
      return (e as Error).message;
    }
  }, [api, signedOut]);

  return { auth, signIn, signOut, showSignIn: () => signedOut('none'), recheck: check };
}
