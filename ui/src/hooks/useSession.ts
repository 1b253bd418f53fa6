import type { Session } from '@driftline/protocol';
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import { type WriteAction, whyNot } from '../core/roles.js';

/** The signed-in session, provided by `App` around every view once the hub has accepted a credential. */
export const SessionContext = createContext<Session | null>(null);

export function useSession(): Session | null {
  return useContext(SessionContext);
}

/** Why the signed-in person may not do `action` (a sentence to show beside the control), or null. */
export function useWhyNot(action: WriteAction): string | null {
  const session = useSession();
  if (!session) return 'Sign in first.';
  return whyNot(session.roles, action);
}
