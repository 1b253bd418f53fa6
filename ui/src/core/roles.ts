import type { Role } from '@driftline/protocol';

/** Something the dashboard can ask the hub to do that changes state. */
export type WriteAction = 'plan-request' | 'approve' | 'waive';

/** The role each write needs (the hub's rule; `admin` implies every role). */
const NEEDS: Record<WriteAction, Role> = {
  'plan-request': 'operator',
  approve: 'approver',
  waive: 'operator',
};

const WHAT: Record<WriteAction, string> = {
  'plan-request': 'Filing a plan request',
  approve: 'Approving a plan',
  waive: 'Waiving drift',
};

/** Whether someone holding `roles` may do `action`. */
export function can(roles: readonly Role[], action: WriteAction): boolean {
  return roles.includes('admin') || roles.includes(NEEDS[action]);
}

/**
 * Why `roles` may not do `action`, in words for the person at the dashboard, or null when they may.
 * The hub refuses anyway; this only saves a click that would fail.
 */
export function whyNot(roles: readonly Role[], action: WriteAction): string | null {
  if (can(roles, action)) return null;
  const held = roles.length > 0 ? roles.join(', ') : 'no role';
  return `${WHAT[action]} needs the ${NEEDS[action]} role; you have ${held} (ask an admin for a token with the ${NEEDS[action]} role)`;
}
