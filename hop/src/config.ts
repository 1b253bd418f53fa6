/**
 * `@driftline/hop/config`: rules the agent's and the relay's config files share. Pure (no I/O, no
 * server), so the agent can load it without the hop server.
 */

/** A config key that was renamed: the old name is read as the new one for one version. */
export interface RenamedKey {
  old: string;
  now: string;
  /** The decision record that renamed it. */
  decision: string;
}

/** `bundles:` became `publications:` (decision 170) in agent.yaml and relay.yaml. */
export const PUBLICATIONS_KEY: RenamedKey = { old: 'bundles', now: 'publications', decision: '170' };

/** The problem when the file gives both names (ambiguous: which one holds?), else null. */
export function renamedKeyProblem(raw: unknown, k: RenamedKey): string | null {
  const given = (key: string) => raw !== null && typeof raw === 'object' && key in raw;
  return given(k.old) && given(k.now) ? `${k.old}: is the old name of ${k.now}:; keep only ${k.now}:` : null;
}

/** The warning `config check` prints while a file still uses the old name. */
export const renamedKeyWarning = (k: RenamedKey): string =>
  `${k.old}: is deprecated (decision ${k.decision}); rename it to ${k.now}: (same keys), read as such for now`;
