import type { FleetSite } from '@driftline/protocol';
import { formatDuration } from './time.js';

/**
 * The "expected contact" of a site's link row. Where the hub judges the site by a contact plan (declared,
 * or learned with enough confidence), that plan is the expectation: contact once in each window, not the
 * agents' expected interval, which a site with one plan a year puts at half a day beside a 4-minute plan
 * (issue 44). Without a judged plan: the interval, or null.
 */
export function expectedContactText(
  s: Pick<FleetSite, 'contact' | 'expectedContactIntervalS'>,
): string | null {
  const plan = s.contact;
  const base =
    plan?.judged && plan.windows.length > 0
      ? `once in each ${plan.source === 'learned' ? 'predicted window' : 'window'}: ${plan.windows.join('; ')}`
      : s.expectedContactIntervalS !== null
        ? `every ${formatDuration(s.expectedContactIntervalS * 1000)}`
        : null;
  // windows declared at the hub that no agent holds yet are not judged (docs/decisions/590-windows-declared-once.md)
  const waiting = plan?.unconfirmed?.length
    ? `declared at the hub, waiting for the agent to confirm: ${plan.unconfirmed.join('; ')}`
    : null;
  return base && waiting ? `${base} (${waiting})` : (base ?? waiting);
}
