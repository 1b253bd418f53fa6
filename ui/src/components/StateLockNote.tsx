import type { StateLock } from '@driftline/protocol';
import { forceUnlockCommand } from '../core/forceUnlock.js';

/**
 * The state lock a `locked` or `stuck-lock` run met, as Terraform named it, and the command that releases
 * it at the site (docs/decisions/555-stuck-lock-stays-stuck.md).
 */
export function StateLockNote({ lock, stuck }: { lock: StateLock; stuck: boolean }) {
  return (
    <section class="state-lock" aria-label="State lock">
      <h2>{stuck ? 'Stuck state lock' : 'State lock held'}</h2>
      <dl class="facts">
        <dt>Lock ID</dt>
        <dd>
          <code>{lock.id}</code>
        </dd>
        {lock.who ? (
          <>
            <dt>Held by</dt>
            <dd>{lock.who}</dd>
          </>
        ) : null}
        {lock.created ? (
          <>
            <dt>Taken</dt>
            <dd>{lock.created}</dd>
          </>
        ) : null}
        {lock.path ? (
          <>
            <dt>State</dt>
            <dd>
              <code>{lock.path}</code>
            </dd>
          </>
        ) : null}
        {lock.operation ? (
          <>
            <dt>Operation</dt>
            <dd>{lock.operation}</dd>
          </>
        ) : null}
      </dl>
      <p>
        When no Terraform run holds it any more (ask {lock.who ?? 'its holder'}), release it at the site with:
      </p>
      <figure aria-label="Command to release the lock">
        <pre class="excerpt">
          <code>{forceUnlockCommand(lock)}</code>
        </pre>
      </figure>
      {lock.dir ? null : (
        <p class="muted small">
          Run it where the component is initialised with its backend (the agent did not say the directory).
        </p>
      )}
    </section>
  );
}
