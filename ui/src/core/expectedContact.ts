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
  if (plan?.judged && plan.windows.length > 0) {
    const which = plan.source === 'learned' ? 'predicted window' : 'window';
    return `once in each ${which}: ${plan.windows.join('; ')}`;
  }
  return s.expectedContactIntervalS !== null
    ? `every ${formatDuration(s.expectedContactIntervalS * 1000)}`
    : null;
}
