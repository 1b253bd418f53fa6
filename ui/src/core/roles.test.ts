import { describe, expect, it } from 'vitest';
import { can, whyNot } from './roles.js';
import { signInFailed, withoutSignInMarker } from './route.js';

describe('roles', () => {
  it('lets operators and admins file plan requests, and nobody else', () => {
    expect(can(['operator'], 'plan-request')).toBe(true);
    expect(can(['admin'], 'plan-request')).toBe(true);
    expect(can(['viewer', 'publisher', 'approver'], 'plan-request')).toBe(false);
    expect(can([], 'plan-request')).toBe(false);
  });

  it('lets approvers and admins approve plans, and nobody else', () => {
    expect(can(['approver'], 'approve')).toBe(true);
    expect(can(['admin'], 'approve')).toBe(true);
    expect(can(['viewer', 'operator', 'publisher'], 'approve')).toBe(false);
  });

  it('says which role is missing and which ones the person has', () => {
    expect(whyNot(['operator'], 'plan-request')).toBeNull();
    expect(whyNot(['viewer', 'publisher'], 'plan-request')).toBe(
      'Filing a plan request needs the operator role; you have viewer, publisher (ask an admin for a token with the operator role)',
    );
  });
});

describe('sign-in marker', () => {
  it('reads the hub’s sign-in failure marker and drops it without touching the view', () => {
    expect(signInFailed('?signin=failed')).toBe(true);
    expect(signInFailed('?view=audit')).toBe(false);
    expect(withoutSignInMarker('?view=site&site=ship-7&signin=failed')).toBe('?view=site&site=ship-7');
    expect(withoutSignInMarker('?signin=failed')).toBe('');
  });
});
