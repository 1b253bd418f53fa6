import { publicKeyToText } from '@driftline/protocol';
import type { PlanSettings } from '../settings.js';

/**
 * A problem when the hub's own key is pinned as an approver: the hub could then approve alone, which the
 * trust model rules out (S6 in docs/architecture.md#invariants). The agent refuses to start with it, and `config check` says so.
 */
export async function hubKeyProblem(
  config: Pick<PlanSettings, 'components'>,
  hubPublicKey: CryptoKey,
): Promise<string | undefined> {
  const hub = await publicKeyToText(hubPublicKey);
  for (const [i, c] of config.components.entries()) {
    const j = c.apply?.approvers.indexOf(hub) ?? -1;
    if (j >= 0)
      return `components[${i}].apply.approvers[${j}]: the hub's public key is pinned as an approver (component ${c.name}); approvers sign with their own keys (\`hub approver keygen\`), never the hub's: remove it`;
  }
  return undefined;
}
