import type { StateLock } from '@driftline/protocol';
import type { SecretRule } from '../redact/rules.js';
import { type SecretValue, scanForSecrets } from '../redact/scan.js';
import type { PlanTarget } from './planTarget.js';

/**
 * Where `terraform force-unlock <id>` is to be run for a run's lock (docs/decisions/555-stuck-lock-stays-stuck.md):
 * the configured working directory, for `-chdir=`, and the environment's workspace (`TF_WORKSPACE`), each
 * only when it passes the scan. A component planned from a git checkout (`ref`) has no directory to
 * name: the checkout is gone once the run ends.
 */
export function unlockWhere(
  t: PlanTarget,
  where: { dir: string; ref?: string },
  secrets: readonly SecretValue[],
  rules: readonly SecretRule[],
): Pick<StateLock, 'dir' | 'workspace'> {
  // The bounds of `StateLockSchema`.
  const clean = (v: string | undefined, max: number) =>
    v !== undefined && v.length <= max && scanForSecrets(v, secrets, rules).ok ? v : undefined;
  const fromCheckout = where.ref !== undefined || t.component.source !== undefined;
  const dir = fromCheckout ? undefined : clean(where.dir, 500);
  const workspace = clean(t.environment.workspace, 200);
  return { ...(dir ? { dir } : {}), ...(workspace ? { workspace } : {}) };
}
